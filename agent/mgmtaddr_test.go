package agent

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"testing"
)

// defaultSource is the fake host's: the first routable address of its
// first default route's interface, as the host's is without a route
// source.
func (f fakeNetOS) defaultSource() (netip.Addr, error) {
	if f.err != nil {
		return netip.Addr{}, f.err
	}
	for _, v4 := range []bool{true, false} {
		for _, d := range f.defaults {
			if a, ok := firstRoutable(f.addrs[d], v4); ok {
				return a, nil
			}
		}
	}
	return netip.Addr{}, errors.New("no default route with a source address")
}

func (f fakeNetOS) sourceToward(_ context.Context, hostport string) (netip.Addr, error) {
	if a, ok := f.toward[hostport]; ok {
		return a, nil
	}
	return netip.Addr{}, fmt.Errorf("the route to %s: network is unreachable", hostport)
}

// Gossip and gRPC addresses without a host listen on the management
// address: --advertise's, else the source toward the first seed with a
// route, else the default route's source; an explicit host wins; none
// found is ErrNoMgmtAddr naming the flags.
func TestManagementAddress(t *testing.T) {
	host := fakeNetOS{
		defaults: []string{"eth0"},
		addrs:    map[string][]netip.Addr{"eth0": addrs("fe80::5", "2001:db8::5", "10.0.0.5"), "v6": addrs("fe80::6", "2001:db8:1::6")},
		toward:   map[string]netip.Addr{"10.1.0.1:7946": netip.MustParseAddr("10.1.0.5")},
	}
	v6only := host
	v6only.defaults = []string{"v6"}
	for _, tc := range []struct {
		name             string
		cfg              Config
		os               fakeNetOS
		bind, grpc, fail string
	}{
		{"default route", Config{Bind: ":7946"}, host, "10.0.0.5:7946", "10.0.0.5:7443", ""},
		{"IPv6 default route", Config{Bind: ":7946"}, v6only, "[2001:db8:1::6]:7946", "[2001:db8:1::6]:7443", ""},
		{"seed", Config{Bind: ":7946", Join: []string{"10.9.9.9:7946", "10.1.0.1:7946"}}, host, "10.1.0.5:7946", "10.1.0.5:7443", ""},
		{"advertise", Config{Bind: ":0", Advertise: "10.2.0.5:7946", Join: []string{"10.1.0.1:7946"}}, host, "10.2.0.5:0", "10.2.0.5:7443", ""},
		{"explicit", Config{Bind: "0.0.0.0:7946", GRPCAddr: "127.0.0.1:7443"}, host, "0.0.0.0:7946", "127.0.0.1:7443", ""},
		{"only gRPC without a host", Config{Bind: "127.0.0.1:7946", GRPCAddr: ":7000"}, host, "127.0.0.1:7946", "10.0.0.5:7000", ""},
		{"no gossip", Config{}, host, "", "10.0.0.5:7443", ""},
		{"nothing found", Config{Bind: ":7946", Join: []string{"10.9.9.9:7946"}}, fakeNetOS{}, "", "",
			"--bind and --grpc without a host listen on the management address: no management address: the route to 10.9.9.9:7946: network is unreachable\nthe default route: no default route"},
		{"bad address", Config{Bind: "7946"}, host, "", "", `--bind "7946": address 7946: missing port in address (want HOST:PORT, or :PORT for the management address)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			cfg.Role, cfg.Iface, cfg.netOS, cfg.Logger, cfg.InsecureGossip = RoleReceiver, "eth1", tc.os, testLog(t), true
			a, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer a.root.Close()
			err = a.resolveListen(context.Background())
			switch {
			case tc.fail != "":
				if err == nil || !strings.Contains(err.Error(), tc.fail) {
					t.Errorf("got %v, want an error with %q", err, tc.fail)
				}
				if strings.Contains(tc.fail, "management address:") && !errors.Is(err, ErrNoMgmtAddr) {
					t.Errorf("%v is not ErrNoMgmtAddr", err)
				}
			case err != nil:
				t.Errorf("refused: %v", err)
			case a.cfg.Bind != tc.bind || a.cfg.GRPCAddr != tc.grpc:
				t.Errorf("bind %s, grpc %s; want %s and %s", a.cfg.Bind, a.cfg.GRPCAddr, tc.bind, tc.grpc)
			}
		})
	}
}
