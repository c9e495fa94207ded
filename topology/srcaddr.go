package topology

import "net/netip"

// SourceAddr is the default source address for traffic to dst from an
// interface holding addrs: the first address of dst's family that is
// neither unspecified nor link-local (a link-local source is only taken
// for a link-local destination, which has no other to answer). ok is
// false when the interface has none.
func SourceAddr(addrs []netip.Addr, dst netip.Addr) (src netip.Addr, ok bool) {
	dst = dst.Unmap()
	for _, a := range addrs {
		a = a.Unmap()
		if !a.IsValid() || a.IsUnspecified() || a.Is4() != dst.Is4() {
			continue
		}
		if a.IsLinkLocalUnicast() && !dst.IsLinkLocalUnicast() {
			continue
		}
		return a.WithZone(""), true
	}
	return netip.Addr{}, false
}
