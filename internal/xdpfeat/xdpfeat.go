// Package xdpfeat reads an interface's XDP features (what its driver can
// do with XDP: NETDEV_XDP_ACT_*) over the netdev generic netlink family
// of Linux 6.3 and later: the one reader, for the XDP sender's refusal of
// a device that cannot transmit live frames and for doctor's kernel check.
package xdpfeat

import "errors"

// The feature bits (enum netdev_xdp_act).
const (
	Basic       = 1 << 0 // XDP_ABORTED, XDP_DROP, XDP_PASS, XDP_TX in the driver (native XDP)
	Redirect    = 1 << 1
	NdoXmit     = 1 << 2 // the driver transmits XDP frames redirected to it (ndo_xdp_xmit): live-frame XDP_TX uses it
	XSKZeroCopy = 1 << 3
	HWOffload   = 1 << 4
	RXSG        = 1 << 5
	NdoXmitSG   = 1 << 6
)

// ErrUnknown is returned when the kernel predates the netdev family
// (before 6.3), so the driver's XDP features are unknown.
var ErrUnknown = errors.New("kernel does not report XDP features (netdev netlink family, 6.3+)")

// names are the bits as ynl and the kernel's documentation name them.
var names = []struct {
	bit  uint64
	name string
}{{Basic, "basic"}, {Redirect, "redirect"}, {NdoXmit, "ndo-xmit"}, {XSKZeroCopy, "xsk-zerocopy"}, {HWOffload, "hw-offload"}, {RXSG, "rx-sg"}, {NdoXmitSG, "ndo-xmit-sg"}}

// Names are the features of bits by name, in bit order.
func Names(bits uint64) []string {
	out := []string{}
	for _, n := range names {
		if bits&n.bit != 0 {
			out = append(out, n.name)
		}
	}
	return out
}
