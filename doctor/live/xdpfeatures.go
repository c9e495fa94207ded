package live

import (
	"fmt"
	"net"

	"github.com/linerate/linerate/internal/xdpfeat"
)

// xdpFeatures reads the interface's xdp-features by name (internal/xdpfeat:
// the netdev generic netlink family, Linux 6.3 and later).
func xdpFeatures(iface string) ([]string, error) {
	ifi, err := net.InterfaceByName(iface)
	if err != nil {
		return nil, fmt.Errorf("xdp-features of %s: %w", iface, err)
	}
	bits, err := xdpfeat.Read(ifi.Index)
	if err != nil {
		return nil, fmt.Errorf("xdp-features of %s: %w", iface, err)
	}
	return xdpfeat.Names(bits), nil
}
