//go:build linux && traffic

package agent

import (
	"context"
	"net"
	"net/netip"
	"testing"

	"github.com/vishvananda/netlink"

	"github.com/linerate/linerate/internal/netns/nstest"
)

// The host's reads of the management address's candidates, over netlink
// and a connected UDP socket in a namespace: the default route's
// interface address, then the route's own source once it names one, and
// the source toward a peer.
func TestManagementAddressNetns(t *testing.T) {
	p := nstest.NewPair(t, 1)
	read := func() (def, toward netip.Addr, err error) {
		err = p.A.NS.Do(func() error {
			if def, err = (hostNetOS{}).defaultSource(); err != nil {
				return err
			}
			toward, err = (hostNetOS{}).sourceToward(context.Background(), "198.18.0.2:7946")
			return err
		})
		return def, toward, err
	}
	if _, _, err := read(); err == nil {
		t.Fatal("a default source without a default route")
	}
	if err := p.A.NS.Do(func() error {
		return netlink.RouteAdd(&netlink.Route{LinkIndex: p.A.Index, Gw: net.ParseIP("198.18.0.2")})
	}); err != nil {
		t.Fatal(err)
	}
	if def, toward, err := read(); err != nil || def != netip.MustParseAddr("198.18.0.1") || toward != netip.MustParseAddr("198.18.0.1") {
		t.Fatalf("default source %s, toward the peer %s (%v); want 198.18.0.1", def, toward, err)
	}
	if err := p.A.NS.Do(func() error {
		l, err := netlink.LinkByIndex(p.A.Index)
		if err != nil {
			return err
		}
		if err := netlink.AddrAdd(l, &netlink.Addr{IPNet: &net.IPNet{IP: net.ParseIP("198.18.0.9"), Mask: net.CIDRMask(24, 32)}}); err != nil {
			return err
		}
		return netlink.RouteReplace(&netlink.Route{LinkIndex: p.A.Index, Gw: net.ParseIP("198.18.0.2"), Src: net.ParseIP("198.18.0.9")})
	}); err != nil {
		t.Fatal(err)
	}
	if def, _, err := read(); err != nil || def != netip.MustParseAddr("198.18.0.9") {
		t.Fatalf("default source %s (%v); want the route's own 198.18.0.9", def, err)
	}
}
