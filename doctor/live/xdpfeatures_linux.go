//go:build linux

package live

import (
	"errors"
	"fmt"
	"net"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// The generic netlink and netdev family numbers (linux/genetlink.h,
// linux/netdev.h).
const (
	genlIDCtrl         = 0x10 // GENL_ID_CTRL
	ctrlCmdGetFamily   = 3    // CTRL_CMD_GETFAMILY
	ctrlAttrFamilyID   = 1    // CTRL_ATTR_FAMILY_ID
	ctrlAttrFamilyName = 2    // CTRL_ATTR_FAMILY_NAME
	netdevCmdDevGet    = 1    // NETDEV_CMD_DEV_GET
	netdevAttrIfindex  = 1    // NETDEV_A_DEV_IFINDEX
	netdevAttrFeatures = 3    // NETDEV_A_DEV_XDP_FEATURES
)

// xdpActs are the netdev family's XDP feature bits (enum netdev_xdp_act)
// by the names ynl and the kernel's documentation give them.
var xdpActs = []struct {
	bit  uint64
	name string
}{{1, "basic"}, {2, "redirect"}, {4, "ndo-xmit"}, {8, "xsk-zerocopy"}, {16, "hw-offload"}, {32, "rx-sg"}, {64, "ndo-xmit-sg"}}

// xdpFeatures reads the interface's xdp-features over the netdev generic
// netlink family (Linux 6.3 and later): what its driver can do with XDP
// (`ynl --family netdev --do dev-get`).
func xdpFeatures(iface string) ([]string, error) {
	ifi, err := net.InterfaceByName(iface)
	if err != nil {
		return nil, fmt.Errorf("xdp-features of %s: %w", iface, err)
	}
	c, err := netlink.Dial(unix.NETLINK_GENERIC, nil)
	if err != nil {
		return nil, fmt.Errorf("xdp-features of %s: open generic netlink: %w", iface, err)
	}
	defer c.Close()
	family, err := genlFamily(c, "netdev")
	if err != nil {
		return nil, fmt.Errorf("xdp-features of %s: %w", iface, err)
	}
	ae := netlink.NewAttributeEncoder()
	ae.Uint32(netdevAttrIfindex, uint32(ifi.Index))
	attrs, err := genlDo(c, family, netdevCmdDevGet, ae)
	if err != nil {
		return nil, fmt.Errorf("xdp-features of %s: netdev dev-get: %w", iface, err)
	}
	var bits uint64
	found := false
	for attrs.Next() {
		if attrs.Type() == netdevAttrFeatures {
			bits, found = attrs.Uint64(), true
		}
	}
	if err := attrs.Err(); err != nil || !found {
		return nil, fmt.Errorf("xdp-features of %s: no xdp-features in the netdev answer (%v)", iface, err)
	}
	out := []string{}
	for _, a := range xdpActs {
		if bits&a.bit != 0 {
			out = append(out, a.name)
		}
	}
	return out, nil
}

// genlFamily resolves a generic netlink family's id by its name.
func genlFamily(c *netlink.Conn, name string) (uint16, error) {
	ae := netlink.NewAttributeEncoder()
	ae.String(ctrlAttrFamilyName, name)
	attrs, err := genlDo(c, genlIDCtrl, ctrlCmdGetFamily, ae)
	if errors.Is(err, unix.ENOENT) {
		return 0, fmt.Errorf("no %s generic netlink family in this kernel (Linux 6.3 added it)", name)
	}
	if err != nil {
		return 0, fmt.Errorf("resolve the %s generic netlink family: %w", name, err)
	}
	for attrs.Next() {
		if attrs.Type() == ctrlAttrFamilyID {
			return attrs.Uint16(), nil
		}
	}
	return 0, fmt.Errorf("resolve the %s generic netlink family: no id in the answer (%v)", name, attrs.Err())
}

// genlDo sends one generic netlink request (version 1) and decodes the
// attributes of its one answer.
func genlDo(c *netlink.Conn, family uint16, cmd uint8, ae *netlink.AttributeEncoder) (*netlink.AttributeDecoder, error) {
	b, err := ae.Encode()
	if err != nil {
		return nil, err
	}
	msgs, err := c.Execute(netlink.Message{
		Header: netlink.Header{Type: netlink.HeaderType(family), Flags: netlink.Request},
		Data:   append([]byte{cmd, 1, 0, 0}, b...), // genlmsghdr: cmd, version, reserved
	})
	if err != nil {
		return nil, err
	}
	if len(msgs) != 1 || len(msgs[0].Data) < 4 {
		return nil, fmt.Errorf("%d answers, want one with a generic netlink header", len(msgs))
	}
	return netlink.NewAttributeDecoder(msgs[0].Data[4:])
}
