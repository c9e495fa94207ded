package live

import (
	"path/filepath"

	"github.com/linerate/linerate/doctor"
	"github.com/linerate/linerate/topology"
)

// Host is the host below root for the checks and the fixes, rootName as
// journals record it ("/" for the live host). The clock and the
// interface's addresses are the running kernel's, so they are read only
// when root is the live host's own "/": a --root snapshot's cannot be
// read, and its checks say so.
//
// The xdp-features (the netdev generic netlink family) are left unread:
// vishvananda/netlink, the netlink library of the module, has no netdev
// family, so XDPFeatures is nil and the kernel check says they were not
// read.
func Host(root *topology.DirRoot, rootName string) doctor.Host {
	h := doctor.Host{Root: root, RootName: rootName}
	if filepath.Clean(root.Dir()) == "/" {
		h.Clock, h.IfaceAddrs = ReadClock, ifaceAddrs
	}
	// OpenNIC: wired when internal/ethtool implements doctor.NIC.
	// Firewall: wired when doctor/nft lands.
	return h
}
