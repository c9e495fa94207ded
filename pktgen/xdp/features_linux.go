//go:build linux

package xdp

import (
	"encoding/binary"
	"errors"
	"fmt"

	"syscall"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// The netdev generic-netlink family (include/uapi/linux/netdev.h, 6.3+).
const (
	netdevCmdDevGet       = 1
	netdevAttrIfindex     = 1
	netdevAttrXDPFeatures = 3

	// xdpActNdoXmit is set when the driver can transmit XDP frames redirected
	// to it (ndo_xdp_xmit), which live-frame XDP_TX uses.
	xdpActNdoXmit = 1 << 2
)

// errNoFeatures is returned when the kernel predates the netdev family
// (before 6.3), so the driver's XDP features are unknown.
var errNoFeatures = errors.New("kernel does not report XDP features (netdev netlink family, 6.3+)")

// xdpFeatures reads the interface's XDP feature bits (NETDEV_XDP_ACT_*)
// through the netdev family, in the calling thread's network namespace.
func xdpFeatures(ifindex int) (uint64, error) {
	fam, err := netlink.GenlFamilyGet("netdev")
	if err != nil {
		return 0, fmt.Errorf("%w: %w", errNoFeatures, err)
	}
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_GENERIC)
	if err != nil {
		return 0, fmt.Errorf("netdev dev-get ifindex %d: open netlink socket: %w", ifindex, err)
	}
	defer unix.Close(fd)
	tv := unix.Timeval{Sec: 2}
	if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
		return 0, fmt.Errorf("netdev dev-get ifindex %d: set receive timeout: %w", ifindex, err)
	}
	// nlmsghdr, genlmsghdr, one u32 attribute.
	req := make([]byte, 16+4+8)
	ne := binary.NativeEndian
	ne.PutUint32(req[0:], uint32(len(req)))
	ne.PutUint16(req[4:], fam.ID)
	ne.PutUint16(req[6:], unix.NLM_F_REQUEST)
	ne.PutUint32(req[8:], 1)
	req[16], req[17] = netdevCmdDevGet, 1
	ne.PutUint16(req[20:], 8)
	ne.PutUint16(req[22:], netdevAttrIfindex)
	ne.PutUint32(req[24:], uint32(ifindex))
	if err := unix.Sendto(fd, req, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return 0, fmt.Errorf("netdev dev-get ifindex %d: send: %w", ifindex, err)
	}
	buf := make([]byte, 8192)
	n, _, err := unix.Recvfrom(fd, buf, 0)
	if err != nil {
		return 0, fmt.Errorf("netdev dev-get ifindex %d: receive: %w", ifindex, err)
	}
	msgs, err := syscall.ParseNetlinkMessage(buf[:n])
	if err != nil {
		return 0, fmt.Errorf("netdev dev-get ifindex %d: parse reply: %w", ifindex, err)
	}
	for _, m := range msgs {
		if m.Header.Type == unix.NLMSG_ERROR {
			if len(m.Data) >= 4 {
				if e := int32(ne.Uint32(m.Data)); e != 0 {
					return 0, fmt.Errorf("netdev dev-get ifindex %d: %w", ifindex, syscall.Errno(-e))
				}
			}
			continue
		}
		if m.Header.Type != fam.ID || len(m.Data) < 4 {
			continue
		}
		for b := m.Data[4:]; len(b) >= 4; {
			l, typ := int(ne.Uint16(b)), ne.Uint16(b[2:])&0x3fff
			if l < 4 || l > len(b) {
				break
			}
			if typ == netdevAttrXDPFeatures && l >= 12 {
				return ne.Uint64(b[4:]), nil
			}
			b = b[min((l+3)&^3, len(b)):]
		}
	}
	return 0, fmt.Errorf("netdev dev-get ifindex %d: no xdp-features in the reply: %w", ifindex, errNoFeatures)
}
