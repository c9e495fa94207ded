package topology

import (
	"fmt"
	"net"
	"net/netip"
)

// InterfaceAddrs are the addresses of iface in the calling thread's
// network namespace, as the kernel holds them now. They come from
// netlink, not from a Root: neither sysfs nor procfs lists an
// interface's IPv4 addresses, so a snapshot or --root cannot supply them.
// SourceAddr picks the default source among them.
func InterfaceAddrs(iface string) ([]netip.Addr, error) {
	ifi, err := net.InterfaceByName(iface)
	if err != nil {
		return nil, fmt.Errorf("addresses of %s: %w", iface, err)
	}
	addrs, err := ifi.Addrs()
	if err != nil {
		return nil, fmt.Errorf("addresses of %s: %w", iface, err)
	}
	out := make([]netip.Addr, 0, len(addrs))
	for _, a := range addrs {
		if p, err := netip.ParsePrefix(a.String()); err == nil {
			out = append(out, p.Addr())
		}
	}
	return out, nil
}
