//go:build linux

package agent

import (
	"errors"
	"fmt"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// hostNetOS reads routes and device counters over netlink, and asks
// drivers over ethtool, in the calling thread's network namespace.
type hostNetOS struct{}

// dumpTries bounds the retries of a netlink dump the kernel interrupted.
const dumpTries = 3

func (hostNetOS) defaultRouteIfaces() ([]string, error) {
	var names []string
	seen := map[int]bool{}
	for _, fam := range []int{netlink.FAMILY_V4, netlink.FAMILY_V6} {
		routes, err := defaultRoutes(fam)
		if err != nil {
			return nil, err
		}
		for _, r := range routes {
			idx := []int{r.LinkIndex}
			for _, nh := range r.MultiPath {
				idx = append(idx, nh.LinkIndex)
			}
			for _, i := range idx {
				if i <= 0 || seen[i] {
					continue
				}
				seen[i] = true
				l, err := netlink.LinkByIndex(i)
				if err != nil {
					return nil, fmt.Errorf("interface %d of a default route: %w", i, err)
				}
				names = append(names, l.Attrs().Name)
			}
		}
	}
	return names, nil
}

// defaultRoutes are the main table's unicast default routes of family
// fam.
func defaultRoutes(fam int) ([]netlink.Route, error) {
	var routes []netlink.Route
	var err error
	for range dumpTries {
		if routes, err = netlink.RouteListFiltered(fam, &netlink.Route{Table: unix.RT_TABLE_MAIN}, netlink.RT_FILTER_TABLE); !errors.Is(err, netlink.ErrDumpInterrupted) {
			break
		}
	}
	if err != nil {
		return nil, fmt.Errorf("list routes: %w", err)
	}
	var out []netlink.Route
	for _, r := range routes {
		if r.Type == unix.RTN_UNICAST && (r.Dst == nil || isDefault(r.Dst.Mask)) {
			out = append(out, r)
		}
	}
	return out, nil
}

func isDefault(mask []byte) bool {
	for _, b := range mask {
		if b != 0 {
			return false
		}
	}
	return true
}

// txDropped is the named device's tx_dropped (stats64).
func (hostNetOS) txDropped(name string) (uint64, error) {
	l, err := netlink.LinkByName(name)
	if err != nil {
		return 0, fmt.Errorf("read tx_dropped of %s: %w", name, err)
	}
	if st := l.Attrs().Statistics; st != nil {
		return st.TxDropped, nil
	}
	return 0, fmt.Errorf("read tx_dropped of %s: no statistics", name)
}
