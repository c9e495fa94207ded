//go:build !linux

package ethtool

import (
	"fmt"
	"runtime"
)

// Reader reads one interface's driver information and statistics; off
// Linux there is none to read.
type Reader struct{ name string }

// Open returns an error wrapping ErrNotSupported: SIOCETHTOOL is Linux's.
func Open(iface string) (*Reader, error) {
	return nil, fmt.Errorf("ethtool %s: %w on %s", iface, ErrNotSupported, runtime.GOOS)
}

// Close releases the reader's socket.
func (r *Reader) Close() error { return nil }

// Driver is the interface's driver name.
func (r *Reader) Driver() (string, error) {
	info, err := r.Info()
	return info.Driver, err
}

// Info is the interface's driver name and firmware version.
func (r *Reader) Info() (DriverInfo, error) {
	return DriverInfo{}, fmt.Errorf("ethtool driver info of %s: %w on %s", r.name, ErrNotSupported, runtime.GOOS)
}

// Stats returns the driver's statistics, name → value.
func (r *Reader) Stats() (map[string]uint64, error) {
	return nil, fmt.Errorf("ethtool statistics of %s: %w on %s", r.name, ErrNotSupported, runtime.GOOS)
}

// Pause is the interface's Ethernet flow control.
func (r *Reader) Pause() (Pause, error) { return Pause{}, r.unsupported("pause parameters") }

// SetPause writes the interface's flow control.
func (r *Reader) SetPause(Pause) error { return r.unsupported("set pause parameters") }

// Coalesce is the interface's interrupt coalescing.
func (r *Reader) Coalesce() (Coalesce, error) { return Coalesce{}, r.unsupported("coalescing") }

// SetCoalesce writes the interface's interrupt coalescing.
func (r *Reader) SetCoalesce(Coalesce) error { return r.unsupported("set coalescing") }

// Rings are the interface's ring sizes and their maximums.
func (r *Reader) Rings() (Rings, error) { return Rings{}, r.unsupported("rings") }

// SetRings writes the interface's ring sizes.
func (r *Reader) SetRings(Rings) error { return r.unsupported("set rings") }

// Features are the interface's offloads.
func (r *Reader) Features() ([]Feature, error) { return nil, r.unsupported("features") }

// Link is the interface's speed, duplex and auto-negotiation.
func (r *Reader) Link() (Link, error) { return Link{}, r.unsupported("link settings") }

func (r *Reader) unsupported(what string) error {
	return fmt.Errorf("ethtool %s of %s: %w on %s", what, r.name, ErrNotSupported, runtime.GOOS)
}
