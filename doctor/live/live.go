package live

import (
	"fmt"
	"path/filepath"

	"github.com/linerate/linerate/doctor"
	"github.com/linerate/linerate/doctor/nft"
	"github.com/linerate/linerate/internal/ethtool"
	"github.com/linerate/linerate/topology"
)

// Host is the host below root for the checks and the fixes, rootName as
// journals record it ("/" for the live host). The clock and the
// interface's addresses are the running kernel's, so they are read only
// when root is the live host's own "/": a --root snapshot's cannot be
// read, and its checks say so.
//
// The xdp-features are read over the netdev generic netlink family
// (internal/xdpfeat); a kernel older than 6.3 has none, and the kernel
// check says so.
//
// The NIC's ethtool parameters (internal/ethtool) and the ruleset
// (doctor/nft, over a netlink socket that stays bound to the calling
// thread's network namespace: iface narrows its netdev chains) are the
// running kernel's too. A kernel without nf_tables has an empty ruleset
// (nft.Absent); one whose ruleset cannot be opened leaves Firewall nil,
// and the conntrack and firewall checks say it was not read.
func Host(root *topology.DirRoot, rootName, iface string) doctor.Host {
	h := doctor.Host{Root: root, RootName: rootName}
	if filepath.Clean(root.Dir()) != "/" {
		return h
	}
	h.Clock, h.IfaceAddrs, h.OpenNIC, h.XDPFeatures = ReadClock, ifaceAddrs, openNIC, xdpFeatures
	fw, err := nft.Open(iface)
	switch {
	case err == nil:
		h.Firewall = fw
	case !exists(root, "/sys/module/nf_tables"):
		// No nf_tables in this kernel (a guest without the module): no
		// table, so no rule; not a ruleset that cannot be read.
		h.Firewall = nft.Absent{Why: fmt.Sprintf("/sys/module/nf_tables: absent; its netlink socket: %v", err)}
	}
	return h
}

func exists(r topology.Root, name string) bool {
	_, err := r.Stat(name)
	return err == nil
}

// openNIC opens the interface's ethtool parameters.
func openNIC(iface string) (doctor.NIC, error) {
	r, err := ethtool.Open(iface)
	if err != nil {
		return nil, err
	}
	return r, nil
}
