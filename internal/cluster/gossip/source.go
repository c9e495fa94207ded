package gossip

import (
	"context"
	"fmt"
	"net"
	"net/netip"
)

// SourceToward is the address this host sends from to reach hostport:
// the kernel's route lookup for a UDP socket connected there (nothing is
// sent). A coordinator that names no gossip host listens on it, the
// address its first --join seed is reached from.
func SourceToward(ctx context.Context, hostport string) (netip.Addr, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "udp", hostport)
	if err != nil {
		return netip.Addr{}, fmt.Errorf("the route to %s: %w", hostport, err)
	}
	defer c.Close()
	ap, err := netip.ParseAddrPort(c.LocalAddr().String())
	if err != nil {
		return netip.Addr{}, fmt.Errorf("the route to %s: local address %s: %w", hostport, c.LocalAddr(), err)
	}
	return ap.Addr().Unmap().WithZone(""), nil
}
