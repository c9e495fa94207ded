//go:build linux && traffic

package agent

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/vishvananda/netlink"

	"github.com/linerate/linerate/internal/netns/nstest"
	"github.com/linerate/linerate/pktgen/pktgentest"
)

// TestMgmtIfaceNetns checks that netlink reads a namespace's default routes
// and addresses, and that a sender agent refuses an interface that carries
// the gossip advertise address or the default route there, unless allowed.
func TestMgmtIfaceNetns(t *testing.T) {
	p := nstest.NewPair(t, 1)
	certs := testCerts(t)
	read := func() (routes []string, addrs []netip.Addr) {
		t.Helper()
		if err := p.A.NS.Do(func() (err error) {
			if routes, err = (hostNetOS{}).defaultRouteIfaces(); err != nil {
				return err
			}
			link, err := (hostNetOS{}).iface("lra")
			addrs = link.addrs
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return routes, addrs
	}
	start := func(cfg Config) error {
		t.Helper()
		cfg.Name, cfg.Role, cfg.Iface, cfg.ThreadInit = "snd", RoleSender, "lra", pktgentest.Enter(p.A.NS.Name)
		cfg.GRPCAddr, cfg.TLSDir, cfg.TLSName, cfg.StateDir, cfg.Logger = "127.0.0.1:0", certs, "agent1", t.TempDir(), testLog(t)
		cfg.GossipKey = testGossipKey
		a, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		err = a.Start(context.Background())
		if err != nil && a.GRPCAddr() != "" {
			t.Errorf("refused, yet serving gRPC on %s", a.GRPCAddr())
		}
		if serr := a.Shutdown(context.Background()); serr != nil {
			t.Error(serr)
		}
		return err
	}
	refused := func(err error, want string) {
		t.Helper()
		if !errors.Is(err, ErrMgmtIface) || !strings.Contains(err.Error(), want) {
			t.Errorf("got %v, want ErrMgmtIface with %q", err, want)
		}
	}

	routes, addrs := read()
	if len(routes) != 0 || !slices.Contains(addrs, netip.MustParseAddr("198.18.0.1")) {
		t.Fatalf("before: default routes %v, lra's addresses %v", routes, addrs)
	}
	if err := start(Config{}); err != nil {
		t.Errorf("a plain data interface: %v", err)
	}
	refused(start(Config{Bind: "127.0.0.1:0", Advertise: "198.18.0.1:7946"}), "--iface lra carries the gossip advertise address (--advertise) 198.18.0.1")

	if err := p.A.NS.Do(func() error {
		return netlink.RouteAdd(&netlink.Route{LinkIndex: p.A.Index, Gw: net.ParseIP("198.18.0.2")})
	}); err != nil {
		t.Fatal(err)
	}
	if routes, _ := read(); !slices.Equal(routes, []string{"lra"}) {
		t.Fatalf("default routes %v, want [lra]", routes)
	}
	refused(start(Config{}), "--iface lra carries the default route")
	if err := start(Config{AllowMgmtIface: true}); err != nil {
		t.Errorf("with AllowMgmtIface: %v", err)
	}
}
