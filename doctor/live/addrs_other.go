//go:build !linux

package live

import (
	"fmt"
	"net/netip"
	"runtime"
)

// ifaceAddrs reads no addresses off Linux.
func ifaceAddrs(iface string) ([]netip.Addr, error) {
	return nil, fmt.Errorf("addresses of %s: read over netlink on Linux only, not %s", iface, runtime.GOOS)
}
