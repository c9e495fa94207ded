package agent

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/serf/serf"

	"github.com/linerate/linerate/internal/ethtool"
	"github.com/linerate/linerate/pktgen"
)

// fakeNetOS is a host's routes and addresses for the management check,
// and its device counters.
type fakeNetOS struct {
	defaults []string
	addrs    map[string][]netip.Addr
	macs     map[string]net.HardwareAddr
	err      error
	// tx, when set, answers each read of tx_dropped in turn.
	tx *txReads
	// toward is the source address toward each seed (mgmtaddr_test.go).
	toward map[string]netip.Addr
}

type txReads struct {
	mu     sync.Mutex
	values []uint64
	slow   time.Duration // every read takes this long (netlink on a busy host)
}

func (f fakeNetOS) txDropped(string) (uint64, error) {
	if f.tx == nil {
		return 0, errors.New("no tx_dropped in this fake")
	}
	f.tx.mu.Lock()
	defer f.tx.mu.Unlock()
	time.Sleep(f.tx.slow)
	v := f.tx.values[0]
	if len(f.tx.values) > 1 {
		f.tx.values = f.tx.values[1:]
	}
	return v, nil
}

func (f fakeNetOS) driverInfo(string) (ethtool.DriverInfo, error) {
	return ethtool.DriverInfo{Driver: "fake"}, nil
}

func (f fakeNetOS) defaultRouteIfaces() ([]string, error) { return f.defaults, f.err }

func (f fakeNetOS) iface(name string) (ifaceInfo, error) {
	if f.err != nil {
		return ifaceInfo{}, f.err
	}
	a, ok := f.addrs[name]
	if !ok {
		return ifaceInfo{}, errors.New("no such interface")
	}
	return ifaceInfo{addrs: a, mac: f.macs[name], mtu: 1500}, nil
}

func addrs(ss ...string) []netip.Addr {
	var out []netip.Addr
	for _, s := range ss {
		out = append(out, netip.MustParseAddr(s))
	}
	return out
}

func TestCheckMgmtIface(t *testing.T) {
	host := fakeNetOS{
		defaults: []string{"eth0"},
		addrs: map[string][]netip.Addr{
			"eth0": addrs("10.0.0.5", "2001:db8::5"), "eth1": addrs("10.1.0.5"), "eth2": addrs("198.18.0.1", "fe80::1"),
			"v6": addrs("2001:db8:1::5"), "lo": addrs("127.0.0.1", "::1"),
		},
	}
	v6default := host
	v6default.defaults = []string{"eth0", "v6"}
	for _, tc := range []struct {
		name string
		cfg  Config
		os   netOS
		want string // "" = allowed
		mgmt bool   // errors.Is(err, ErrMgmtIface)
	}{
		{"data interface", Config{Role: RoleSender, Iface: "eth2", GRPCAddr: "10.0.0.5:7443", Bind: "10.0.0.5:7946"}, host, "", false},
		{"default route", Config{Role: RoleSender, Iface: "eth0"}, host, "--iface eth0 carries the default route", true},
		{"both role", Config{Role: RoleBoth, Iface: "eth0"}, host, "the default route", true},
		{"IPv6 default route", Config{Role: RoleSender, Iface: "v6"}, v6default, "--iface v6 carries the default route", true},
		{"gRPC address", Config{Role: RoleSender, Iface: "eth1", GRPCAddr: "10.1.0.5:7443"}, host, "the gRPC address (--grpc) 10.1.0.5", true},
		{"gossip bind", Config{Role: RoleSender, Iface: "eth1", GRPCAddr: "127.0.0.1:7443", Bind: "10.1.0.5:7946"}, host, "the gossip address (--bind) 10.1.0.5", true},
		{"gossip advertise and announced gRPC", Config{Role: RoleSender, Iface: "eth1", GRPCAddr: ":7443", Bind: "0.0.0.0:7946", Advertise: "10.1.0.5:7946"}, host,
			"the announced gRPC address 10.1.0.5 and the gossip advertise address (--advertise) 10.1.0.5", true},
		{"loopback", Config{Role: RoleSender, Iface: "lo", GRPCAddr: "[::1]:7443"}, host, "the gRPC address (--grpc) ::1", true},
		{"everything on it", Config{Role: RoleSender, Iface: "eth0", GRPCAddr: "10.0.0.5:7443", Bind: "[2001:db8::5]:7946"}, host,
			"carries the default route and the gRPC address (--grpc) 10.0.0.5 and the gossip address (--bind) 2001:db8::5", true},
		{"allowed", Config{Role: RoleSender, Iface: "eth0", GRPCAddr: "10.0.0.5:7443", AllowMgmtIface: true}, host, "", false},
		{"receiver", Config{Role: RoleReceiver, Iface: "eth0", GRPCAddr: "10.0.0.5:7443"}, host, "", false},
		{"no such interface", Config{Role: RoleSender, Iface: "eth9"}, host, "read the addresses of eth9: no such interface (give --allow-mgmt-iface to skip the check)", false},
		{"netlink fails", Config{Role: RoleSender, Iface: "eth2"}, fakeNetOS{err: errors.New("netlink: operation not permitted")}, "read the default routes: netlink: operation not permitted", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			cfg.netOS, cfg.Logger, cfg.InsecureGossip = tc.os, testLog(t), true
			if cfg.GRPCAddr == "" {
				cfg.GRPCAddr = "127.0.0.1:7443"
			}
			a, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer a.root.Close()
			err = a.checkRails(context.Background())
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("got %v, want an error with %q", err, tc.want)
			case errors.Is(err, ErrMgmtIface) != tc.mgmt:
				t.Errorf("errors.Is(%v, ErrMgmtIface) = %v, want %v", err, !tc.mgmt, tc.mgmt)
			case tc.mgmt && !strings.Contains(err.Error(), "--allow-mgmt-iface"):
				t.Errorf("%v: does not name --allow-mgmt-iface", err)
			}
		})
	}
}

func TestCheckDestination(t *testing.T) {
	m := func(name string, role Role, st serf.MemberStatus, tags map[string]string) serf.Member {
		tags["role"] = string(role)
		return serf.Member{Name: name, Tags: tags, Status: st}
	}
	members := []serf.Member{
		m("r1", RoleReceiver, serf.StatusAlive, map[string]string{"ips": "198.18.0.2,2001:db8::2", "mac": "02:00:00:00:00:02"}),
		m("r2", RoleBoth, serf.StatusAlive, map[string]string{"ips": "198.18.0.3", "mac": "02:00:00:00:00:03"}),
		m("r3", RoleReceiver, serf.StatusAlive, map[string]string{"ips": "198.18.0.4", "mac": "02:00:00:00:00:03"}), // same MAC as r2 (one host)
		m("gone", RoleReceiver, serf.StatusFailed, map[string]string{"ips": "198.18.0.5", "mac": "02:00:00:00:00:05"}),
		m("s1", RoleSender, serf.StatusAlive, map[string]string{"ips": "198.18.0.6", "mac": "02:00:00:00:00:06"}),
		m("nomac", RoleReceiver, serf.StatusAlive, map[string]string{"ips": "198.18.0.7"}),
	}
	targets := targetsOf(members)
	if len(targets) != 4 {
		t.Fatalf("targets: %v", targets)
	}
	allow := []netip.Prefix{netip.MustParsePrefix("198.19.0.0/24"), netip.MustParsePrefix("2001:db8:9::/64")}
	for _, tc := range []struct {
		name             string
		dstMin, dstMax   string
		mac              string
		allow            []netip.Prefix
		gossip           bool
		want             string // "" = allowed
		alsoWant, notHas string
	}{
		{name: "receiver", dstMin: "198.18.0.2", mac: "02:00:00:00:00:02", gossip: true},
		{name: "receiver IPv6", dstMin: "2001:db8::2", mac: "02:00:00:00:00:02", gossip: true},
		{name: "both", dstMin: "198.18.0.3", dstMax: "198.18.0.3", mac: "02:00:00:00:00:03", gossip: true},
		{name: "range over one MAC", dstMin: "198.18.0.3", dstMax: "198.18.0.4", mac: "02:00:00:00:00:03", gossip: true},
		{name: "not a receiver", dstMin: "198.18.0.9", mac: "02:00:00:00:00:02", gossip: true,
			want:     "destination 198.18.0.9 is not a data address of a receiver in this agent's cluster (receivers: r1 198.18.0.2,2001:db8::2 at 02:00:00:00:00:02;",
			alsoWant: "no --allow-dst); send to an address a receiver announces (its Describe's nic.data_ips), or start the sender agent with --allow-dst 198.18.0.9/32 to allow it"},
		{name: "failed member", dstMin: "198.18.0.5", mac: "02:00:00:00:00:05", gossip: true, want: "destination 198.18.0.5 is not a data address"},
		{name: "sender member", dstMin: "198.18.0.6", mac: "02:00:00:00:00:06", gossip: true, want: "destination 198.18.0.6 is not a data address"},
		{name: "wrong MAC", dstMin: "198.18.0.2", mac: "02:00:00:00:00:03", gossip: true,
			want: "dst_mac 02:00:00:00:00:03 is not the data MAC of the receiver holding 198.18.0.2 (r1 198.18.0.2,2001:db8::2 at 02:00:00:00:00:02); use that MAC (its Describe's nic.mac), or start the sender agent with --allow-dst 198.18.0.2/32 to send there through another next hop"},
		{name: "receiver without MAC", dstMin: "198.18.0.7", mac: "02:00:00:00:00:07", gossip: true, want: "(nomac 198.18.0.7 at no MAC)"},
		{name: "range past the receivers", dstMin: "198.18.0.2", dstMax: "198.18.0.3", mac: "02:00:00:00:00:02", gossip: true,
			want: "dst_mac 02:00:00:00:00:02 is not the data MAC of the receiver holding 198.18.0.3", alsoWant: "--allow-dst 198.18.0.2/31"},
		{name: "range into nothing", dstMin: "198.18.0.4", dstMax: "198.18.0.9", mac: "02:00:00:00:00:03", gossip: true,
			want: "destination 198.18.0.5 is not", alsoWant: "--allow-dst 198.18.0.0/28"},
		{name: "allowed CIDR", dstMin: "198.19.0.1", dstMax: "198.19.0.200", mac: "02:00:00:00:00:99", allow: allow, gossip: true},
		{name: "allowed CIDR, no gossip", dstMin: "2001:db8:9::1", mac: "02:00:00:00:00:99", allow: allow},
		{name: "allowed CIDR skips the MAC check", dstMin: "198.18.0.2", mac: "02:00:00:00:00:99", allow: []netip.Prefix{netip.MustParsePrefix("198.18.0.2/32")}, gossip: true},
		{name: "range leaves the CIDR", dstMin: "198.19.0.250", dstMax: "198.19.1.1", mac: "02:00:00:00:00:99", allow: allow, gossip: true,
			want: "destination 198.19.0.250 is not", alsoWant: "--allow-dst 198.19.0.0/24,2001:db8:9::/64); send to", notHas: "no --allow-dst"},
		{name: "IPv6 link-local, even allowed", dstMin: "fe80::2", mac: "02:00:00:00:00:02", allow: []netip.Prefix{netip.MustParsePrefix("::/0")}, gossip: true,
			want: "destination fe80::2 is IPv6 link-local (fe80::/10): valid on one link only", alsoWant: "whatever --allow-dst allows"},
		{name: "IPv6 range across link-local", dstMin: "fe7f::1", dstMax: "fec0::1", mac: "02:00:00:00:00:02", allow: []netip.Prefix{netip.MustParsePrefix("::/0")}, gossip: true,
			want: "destination fe80:: is IPv6 link-local"},
		{name: "IPv6 range into link-local", dstMin: "fe7f:ffff:ffff:ffff:ffff:ffff:ffff:ffff", dstMax: "fe80::1", mac: "02:00:00:00:00:02", allow: []netip.Prefix{netip.MustParsePrefix("::/0")}, gossip: true,
			want: "destination fe80::1 is IPv6 link-local"},
		{name: "no gossip", dstMin: "198.18.0.2", mac: "02:00:00:00:00:02",
			want: "(the agent runs without gossip (no --bind), so it knows no receivers; no --allow-dst)", notHas: "receivers: r1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := pktgen.Config{DstMin: netip.MustParseAddr(tc.dstMin)}
			if tc.dstMax != "" {
				c.DstMax = netip.MustParseAddr(tc.dstMax)
			}
			c.DstMAC, _ = net.ParseMAC(tc.mac)
			ts := targets
			if !tc.gossip {
				ts = nil
			}
			err := checkDestination(&c, ts, tc.allow, tc.gossip)
			if tc.want == "" {
				if err != nil {
					t.Errorf("refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("allowed")
			}
			for _, w := range []string{tc.want, tc.alsoWant} {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%v\nwant %q in it", err, w)
				}
			}
			if tc.notHas != "" && strings.Contains(err.Error(), tc.notHas) {
				t.Errorf("%v\nhas %q", err, tc.notHas)
			}
		})
	}
}

func TestCover(t *testing.T) {
	for _, tc := range [][3]string{
		{"198.18.0.2", "198.18.0.2", "198.18.0.2/32"},
		{"198.18.0.2", "198.18.0.3", "198.18.0.2/31"},
		{"198.18.0.1", "198.18.0.2", "198.18.0.0/30"},
		{"198.18.0.255", "198.18.1.0", "198.18.0.0/23"},
		{"2001:db8::1", "2001:db8::1", "2001:db8::1/128"},
	} {
		if got := cover(netip.MustParseAddr(tc[0]), netip.MustParseAddr(tc[1])); got.String() != tc[2] {
			t.Errorf("cover(%s, %s) = %s, want %s", tc[0], tc[1], got, tc[2])
		}
	}
}

// A fan-out sender's every thread destination is checked, not only the
// first.
func TestCheckThreadDestinations(t *testing.T) {
	targets := targetsOf([]serf.Member{
		{Name: "r1", Status: serf.StatusAlive, Tags: map[string]string{"role": string(RoleReceiver), "ips": "198.18.0.101", "mac": "02:00:00:00:01:01"}},
		{Name: "r2", Status: serf.StatusAlive, Tags: map[string]string{"role": string(RoleReceiver), "ips": "198.18.0.102", "mac": "02:00:00:00:01:02"}},
	})
	dest := func(ip, mac string) pktgen.Dest {
		m, _ := net.ParseMAC(mac)
		return pktgen.Dest{Addr: netip.MustParseAddr(ip), MAC: m}
	}
	c := &pktgen.Config{DstMin: netip.MustParseAddr("198.18.0.101"), DstMAC: net.HardwareAddr{2, 0, 0, 0, 1, 1},
		ThreadDst: []pktgen.Dest{dest("198.18.0.101", "02:00:00:00:01:01"), dest("198.18.0.102", "02:00:00:00:01:02")}}
	if err := checkDestinations(c, targets, nil, true); err != nil {
		t.Fatalf("both receivers refused: %v", err)
	}
	c.ThreadDst[1] = dest("198.18.0.103", "02:00:00:00:01:02")
	if err := checkDestinations(c, targets, nil, true); err == nil || !strings.HasPrefix(err.Error(), "thread 1: destination 198.18.0.103 is not a data address") {
		t.Fatalf("thread 1 to a non-receiver: %v", err)
	}
}
