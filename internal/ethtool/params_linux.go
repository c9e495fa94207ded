//go:build linux

package ethtool

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// pauseParam is struct ethtool_pauseparam.
type pauseParam struct{ cmd, autoneg, rx, tx uint32 }

// Pause is the interface's Ethernet flow control (ETHTOOL_GPAUSEPARAM,
// `ethtool -a`).
func (r *Reader) Pause() (Pause, error) {
	w := pauseParam{cmd: unix.ETHTOOL_GPAUSEPARAM}
	if err := r.ioctl(unsafe.Pointer(&w)); err != nil {
		return Pause{}, fmt.Errorf("ethtool pause parameters of %s: %w", r.name, err)
	}
	return Pause{Autoneg: w.autoneg != 0, RX: w.rx != 0, TX: w.tx != 0}, nil
}

// SetPause writes the interface's flow control (ETHTOOL_SPAUSEPARAM,
// `ethtool -A`).
func (r *Reader) SetPause(p Pause) error {
	w := pauseParam{cmd: unix.ETHTOOL_SPAUSEPARAM, autoneg: b2u(p.Autoneg), rx: b2u(p.RX), tx: b2u(p.TX)}
	if err := r.ioctl(unsafe.Pointer(&w)); err != nil {
		return fmt.Errorf("set ethtool pause parameters of %s to %s: %w", r.name, p, err)
	}
	return nil
}

// coalesceParam is struct ethtool_coalesce: cmd, then the 22 fields in
// the order coalesceFields gives.
type coalesceParam struct {
	cmd uint32
	v   [coalesceWords]uint32
}

// Coalesce is the interface's interrupt coalescing (ETHTOOL_GCOALESCE,
// `ethtool -c`).
func (r *Reader) Coalesce() (Coalesce, error) {
	w := coalesceParam{cmd: unix.ETHTOOL_GCOALESCE}
	if err := r.ioctl(unsafe.Pointer(&w)); err != nil {
		return Coalesce{}, fmt.Errorf("ethtool coalescing of %s: %w", r.name, err)
	}
	return coalesceFromWords(w.v), nil
}

// SetCoalesce writes every field of the interface's interrupt coalescing
// (ETHTOOL_SCOALESCE, `ethtool -C`). The kernel refuses (EOPNOTSUPP) a
// non-zero value of a field the driver does not support, so a write of
// what Coalesce read is always accepted by that check; the fields only
// netlink has (CQE mode, TX aggregation) are kept by the kernel as they
// were.
func (r *Reader) SetCoalesce(c Coalesce) error {
	w := coalesceParam{cmd: unix.ETHTOOL_SCOALESCE, v: c.words()}
	if err := r.ioctl(unsafe.Pointer(&w)); err != nil {
		return fmt.Errorf("set ethtool coalescing of %s to %s: %w", r.name, c, err)
	}
	return nil
}

// ringParam is struct ethtool_ringparam: the maximums come first.
type ringParam struct {
	cmd                                 uint32
	rxMax, rxMiniMax, rxJumboMax, txMax uint32
	rx, rxMini, rxJumbo, tx             uint32
}

// Rings are the interface's ring sizes and their maximums
// (ETHTOOL_GRINGPARAM, `ethtool -g`).
func (r *Reader) Rings() (Rings, error) {
	w := ringParam{cmd: unix.ETHTOOL_GRINGPARAM}
	if err := r.ioctl(unsafe.Pointer(&w)); err != nil {
		return Rings{}, fmt.Errorf("ethtool rings of %s: %w", r.name, err)
	}
	return Rings{RX: w.rx, RXMini: w.rxMini, RXJumbo: w.rxJumbo, TX: w.tx,
		RXMax: w.rxMax, RXMiniMax: w.rxMiniMax, RXJumboMax: w.rxJumboMax, TXMax: w.txMax}, nil
}

// SetRings writes the interface's ring sizes (ETHTOOL_SRINGPARAM,
// `ethtool -G`); the maximums are the driver's and not written. Many
// drivers reset the link to resize their rings.
func (r *Reader) SetRings(g Rings) error {
	w := ringParam{cmd: unix.ETHTOOL_SRINGPARAM, rx: g.RX, rxMini: g.RXMini, rxJumbo: g.RXJumbo, tx: g.TX}
	if err := r.ioctl(unsafe.Pointer(&w)); err != nil {
		return fmt.Errorf("set ethtool rings of %s to %s: %w", r.name, g, err)
	}
	return nil
}
