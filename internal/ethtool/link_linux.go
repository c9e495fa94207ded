//go:build linux

package ethtool

import (
	"errors"
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// linkSettings is the fixed part of struct ethtool_link_settings (48
// bytes); the link mode bitmaps (3 × nwords u32) follow it.
type linkSettings struct {
	cmd, speed                                                         uint32
	duplex, port, phyAddress, autoneg, mdioSupport, tpMdix, tpMdixCtrl uint8
	nwords                                                             int8
	transceiver, masterSlaveCfg, masterSlaveState, rateMatching        uint8
	_                                                                  [7]uint32
}

// ethtoolCmd is struct ethtool_cmd, ETHTOOL_GSET's (44 bytes).
type ethtoolCmd struct {
	cmd, supported, advertising                                 uint32
	speed                                                       uint16
	duplex, port, phyAddress, transceiver, autoneg, mdioSupport uint8
	maxTxPkt, maxRxPkt                                          uint32
	speedHi                                                     uint16
	tpMdix, tpMdixCtrl                                          uint8
	lpAdvertising                                               uint32
	_                                                           [2]uint32
}

// Link is the interface's speed, duplex, auto-negotiation and port
// (`ethtool IF`): ETHTOOL_GLINKSETTINGS, else (a kernel before 4.6)
// ETHTOOL_GSET.
func (r *Reader) Link() (Link, error) {
	l, err := r.linkSettings()
	if errors.Is(err, ErrNotSupported) || errors.Is(err, unix.EINVAL) {
		if l2, err2 := r.linkGSet(); err2 == nil {
			return l2, nil
		}
	}
	return l, err
}

// linkSettings reads ETHTOOL_GLINKSETTINGS in its two steps: asked with
// no link mode words, the kernel answers how many it has as a negative
// count; asked again with that many, it fills the settings.
func (r *Reader) linkSettings() (Link, error) {
	hdr := int(unsafe.Sizeof(linkSettings{})) / 4
	buf := make([]uint32, hdr)
	ls := (*linkSettings)(unsafe.Pointer(&buf[0]))
	ls.cmd = unix.ETHTOOL_GLINKSETTINGS
	if err := r.ioctl(unsafe.Pointer(&buf[0])); err != nil {
		return Link{}, fmt.Errorf("ethtool link settings of %s: %w", r.name, err)
	}
	if ls.nwords >= 0 {
		return Link{}, fmt.Errorf("ethtool link settings of %s: the kernel asked for %d link mode words, want a negative count", r.name, ls.nwords)
	}
	n := int(-ls.nwords)
	buf = make([]uint32, hdr+3*n)
	ls = (*linkSettings)(unsafe.Pointer(&buf[0]))
	ls.cmd, ls.nwords = unix.ETHTOOL_GLINKSETTINGS, int8(n)
	if err := r.ioctl(unsafe.Pointer(&buf[0])); err != nil {
		return Link{}, fmt.Errorf("ethtool link settings of %s: %w", r.name, err)
	}
	if int(ls.nwords) != n {
		return Link{}, fmt.Errorf("ethtool link settings of %s: %d link mode words, asked with %d", r.name, ls.nwords, n)
	}
	return decodeLink(ls.speed, ls.duplex, ls.port, ls.autoneg), nil
}

// linkGSet reads the link with the older ETHTOOL_GSET.
func (r *Reader) linkGSet() (Link, error) {
	c := ethtoolCmd{cmd: unix.ETHTOOL_GSET}
	if err := r.ioctl(unsafe.Pointer(&c)); err != nil {
		return Link{}, fmt.Errorf("ethtool settings (GSET) of %s: %w", r.name, err)
	}
	return decodeLink(uint32(c.speedHi)<<16|uint32(c.speed), c.duplex, c.port, c.autoneg), nil
}
