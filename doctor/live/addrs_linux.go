//go:build linux

package live

import (
	"fmt"
	"net/netip"

	"github.com/vishvananda/netlink"
)

// ifaceAddrs are the interface's addresses in the calling process's
// network namespace (netlink), link-local ones left out: the addresses
// test traffic is sent to and from.
func ifaceAddrs(iface string) ([]netip.Addr, error) {
	l, err := netlink.LinkByName(iface)
	if err != nil {
		return nil, fmt.Errorf("addresses of %s: %w", iface, err)
	}
	as, err := netlink.AddrList(l, netlink.FAMILY_ALL)
	if err != nil {
		return nil, fmt.Errorf("addresses of %s: %w", iface, err)
	}
	var out []netip.Addr
	for _, a := range as {
		if ip, ok := netip.AddrFromSlice(a.IP); ok && !ip.Unmap().IsLinkLocalUnicast() {
			out = append(out, ip.Unmap())
		}
	}
	return out, nil
}
