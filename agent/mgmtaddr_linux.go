//go:build linux

package agent

import (
	"errors"
	"fmt"
	"net/netip"

	"github.com/vishvananda/netlink"
)

// defaultSource is the preferred source address of the main table's
// default route, IPv4 first, else the first address of its interface that
// is not link-local.
func (h hostNetOS) defaultSource() (netip.Addr, error) {
	for _, fam := range []int{netlink.FAMILY_V4, netlink.FAMILY_V6} {
		routes, err := defaultRoutes(fam)
		if err != nil {
			return netip.Addr{}, err
		}
		for _, r := range routes {
			if src, ok := netip.AddrFromSlice(r.Src); ok && !src.IsUnspecified() {
				return src.Unmap(), nil
			}
			idx := r.LinkIndex
			if idx <= 0 && len(r.MultiPath) > 0 {
				idx = r.MultiPath[0].LinkIndex
			}
			l, err := netlink.LinkByIndex(idx)
			if err != nil {
				return netip.Addr{}, fmt.Errorf("interface %d of the default route: %w", idx, err)
			}
			info, err := h.iface(l.Attrs().Name)
			if err != nil {
				return netip.Addr{}, fmt.Errorf("addresses of %s, the default route's interface: %w", l.Attrs().Name, err)
			}
			if a, ok := firstRoutable(info.addrs, fam == netlink.FAMILY_V4); ok {
				return a, nil
			}
		}
	}
	return netip.Addr{}, errors.New("no default route with a source address")
}
