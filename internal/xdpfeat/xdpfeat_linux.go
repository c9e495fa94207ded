//go:build linux

package xdpfeat

import (
	"encoding/binary"
	"errors"
	"fmt"
	"syscall"

	"golang.org/x/sys/unix"
)

// The netdev generic-netlink family (include/uapi/linux/netdev.h, 6.3+).
const (
	netdevCmdDevGet       = 1
	netdevAttrIfindex     = 1
	netdevAttrXDPFeatures = 3
)

// Read reads the interface's XDP feature bits (NETDEV_XDP_ACT_*)
// through the netdev family, in the calling thread's network namespace:
// two generic-netlink requests on one socket of its own (the family's id
// from the controller, then dev-get), over x/sys/unix. (The netlink
// package's GenlFamilyGet sends a genl header serialised from a 2-byte
// struct as 4 bytes, reading past it: the race detector saw that read
// collide with another goroutine's write when agents start side by side.)
func Read(ifindex int) (uint64, error) {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_GENERIC)
	if err != nil {
		return 0, fmt.Errorf("netdev dev-get ifindex %d: open netlink socket: %w", ifindex, err)
	}
	defer unix.Close(fd)
	tv := unix.Timeval{Sec: 2}
	if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
		return 0, fmt.Errorf("netdev dev-get ifindex %d: set receive timeout: %w", ifindex, err)
	}
	family, err := genlFamily(fd, "netdev")
	if err != nil {
		return 0, fmt.Errorf("%w: %w", ErrUnknown, err)
	}
	ifi := make([]byte, 4)
	binary.NativeEndian.PutUint32(ifi, uint32(ifindex))
	attrs, err := genlRequest(fd, family, netdevCmdDevGet, 1, netdevAttrIfindex, ifi)
	if err != nil {
		return 0, fmt.Errorf("netdev dev-get ifindex %d: %w", ifindex, err)
	}
	if v, ok := attrs[netdevAttrXDPFeatures]; ok && len(v) >= 8 {
		return binary.NativeEndian.Uint64(v), nil
	}
	return 0, fmt.Errorf("netdev dev-get ifindex %d: no xdp-features in the reply: %w", ifindex, ErrUnknown)
}

// genlFamily is the id of the generic-netlink family name, from the
// controller (CTRL_CMD_GETFAMILY).
func genlFamily(fd int, name string) (uint16, error) {
	attrs, err := genlRequest(fd, unix.GENL_ID_CTRL, unix.CTRL_CMD_GETFAMILY, 1, unix.CTRL_ATTR_FAMILY_NAME, append([]byte(name), 0))
	if err != nil {
		return 0, fmt.Errorf("generic netlink family %s: %w", name, err)
	}
	id, ok := attrs[unix.CTRL_ATTR_FAMILY_ID]
	if !ok || len(id) < 2 {
		return 0, fmt.Errorf("generic netlink family %s: no id in the controller's reply", name)
	}
	return binary.NativeEndian.Uint16(id), nil
}

// genlRequest sends one generic-netlink request (command cmd of version
// to family, with one attribute) on fd and returns the attributes of its
// reply by type; a netlink error is returned as its errno.
func genlRequest(fd int, family uint16, cmd, version uint8, attr uint16, value []byte) (map[uint16][]byte, error) {
	ne := binary.NativeEndian
	alen := unix.NLA_HDRLEN + len(value)
	req := make([]byte, unix.NLMSG_HDRLEN+unix.GENL_HDRLEN+(alen+unix.NLA_ALIGNTO-1)&^(unix.NLA_ALIGNTO-1))
	ne.PutUint32(req[0:], uint32(len(req)))
	ne.PutUint16(req[4:], family)
	ne.PutUint16(req[6:], unix.NLM_F_REQUEST)
	ne.PutUint32(req[8:], 1)
	req[16], req[17] = cmd, version
	a := req[unix.NLMSG_HDRLEN+unix.GENL_HDRLEN:]
	ne.PutUint16(a[0:], uint16(alen))
	ne.PutUint16(a[2:], attr)
	copy(a[unix.NLA_HDRLEN:], value)
	if err := unix.Sendto(fd, req, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return nil, fmt.Errorf("send: %w", err)
	}
	buf := make([]byte, 8192)
	n, _, err := unix.Recvfrom(fd, buf, 0)
	if err != nil {
		return nil, fmt.Errorf("receive: %w", err)
	}
	msgs, err := syscall.ParseNetlinkMessage(buf[:n])
	if err != nil {
		return nil, fmt.Errorf("parse reply: %w", err)
	}
	for _, m := range msgs {
		if m.Header.Type == unix.NLMSG_ERROR {
			if len(m.Data) >= 4 {
				if e := int32(ne.Uint32(m.Data)); e != 0 {
					return nil, syscall.Errno(-e)
				}
			}
			continue
		}
		if m.Header.Type != family || len(m.Data) < unix.GENL_HDRLEN {
			continue
		}
		attrs := map[uint16][]byte{}
		for b := m.Data[unix.GENL_HDRLEN:]; len(b) >= unix.NLA_HDRLEN; {
			l, typ := int(ne.Uint16(b)), ne.Uint16(b[2:])&^(unix.NLA_F_NESTED|unix.NLA_F_NET_BYTEORDER)
			if l < unix.NLA_HDRLEN || l > len(b) {
				break
			}
			attrs[typ] = b[unix.NLA_HDRLEN:l]
			b = b[min((l+unix.NLA_ALIGNTO-1)&^(unix.NLA_ALIGNTO-1), len(b)):]
		}
		return attrs, nil
	}
	return nil, errors.New("no reply")
}
