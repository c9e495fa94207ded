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
