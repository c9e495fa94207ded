package agent

import (
	"bytes"
	"context"
	"maps"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/serf/serf"

	"github.com/linerate/linerate/internal/cluster/gossip"
)

func member(a *Agent, name string) (serf.Member, bool) {
	for _, m := range a.Members() {
		if m.Name == name && m.Status == serf.StatusAlive {
			return m, true
		}
	}
	return serf.Member{}, false
}

// fastSerf shortens serf's leave on loopback, and its push-pull to
// every second: gossip retransmits a join only twice in a cluster this
// small (gossip.fleetTiming), and under make unit's load a lost one was
// repaired only by the next push-pull, 30 s later (a member a test
// waited 20 s for never came).
func fastSerf(c *serf.Config) {
	c.LeavePropagateDelay = 10 * time.Millisecond
	c.BroadcastTimeout = 500 * time.Millisecond
	c.MemberlistConfig.PushPullInterval = time.Second
}

func TestSerfJoinTags(t *testing.T) {
	certs := testCerts(t)
	key := bytes.Repeat([]byte{7}, 32)
	a := startAgent(t, Config{Name: "a1", Role: RoleBoth, Iface: "lo", Bind: "127.0.0.1:0", GossipKey: key, Version: "v-test", AllowMgmtIface: true, serfHook: fastSerf}, certs)
	b := startAgent(t, Config{Name: "a2", Role: RoleReceiver, Iface: "lo", Bind: "127.0.0.1:0", GossipKey: key, Join: []string{a.GossipAddr()}, serfHook: fastSerf}, certs)
	var m serf.Member
	poll(t, 3*time.Second, "a1 sees a2", func() (ok bool) { m, ok = member(a, "a2"); return ok })
	want := map[string]string{"role": "receiver", "grpc": b.GRPCAddr(), "iface": "lo", "numa": "-1", "queues": "0", "speed": "0", "backend": "", "version": "dev"}
	for k, v := range want {
		if m.Tags[k] != v {
			t.Errorf("a2's tag %s = %q, want %q (tags %v)", k, m.Tags[k], v, m.Tags)
		}
	}
	// lo has no MAC; its first addresses are the data addresses.
	tg := gossip.DecodeTags(m.Tags)
	if ips := tg.DataIPs; len(ips) == 0 || ips[0] != netip.MustParseAddr("127.0.0.1") || len(ips) > 2 {
		t.Errorf("a2's data addresses %v: want 127.0.0.1 first, at most two (tags %v)", ips, m.Tags)
	}
	if tg.DataMAC != nil {
		t.Errorf("a2 announces MAC %s for lo (tags %v)", tg.DataMAC, m.Tags)
	}
	poll(t, 3*time.Second, "a2 sees a1", func() (ok bool) { m, ok = member(b, "a1"); return ok })
	if m.Tags["role"] != "both" || m.Tags["version"] != "v-test" || m.Tags["grpc"] != a.GRPCAddr() {
		t.Errorf("a1's tags: %v", m.Tags)
	}
}

func TestSerfWrongKeyNeverAppears(t *testing.T) {
	certs := testCerts(t)
	a := startAgent(t, Config{Name: "a1", Role: RoleBoth, Iface: "lo", Bind: "127.0.0.1:0", GossipKey: bytes.Repeat([]byte{1}, 32), AllowMgmtIface: true, serfHook: fastSerf}, certs)
	b, err := New(Config{Name: "intruder", Role: RoleSender, Iface: "lo", Bind: "127.0.0.1:0", GRPCAddr: "127.0.0.1:0", TLSDir: certs, TLSName: "agent1",
		StateDir: t.TempDir(), GossipKey: bytes.Repeat([]byte{2}, 32), Join: []string{a.GossipAddr()}, AllowMgmtIface: true, Logger: testLog(t), serfHook: fastSerf})
	if err != nil {
		t.Fatal(err)
	}
	// The join fails; the agent stays up, retrying in the background.
	err = b.Start(context.Background())
	t.Cleanup(func() { _ = b.Shutdown(context.Background()) })
	if err != nil {
		t.Fatalf("an agent whose join failed did not start: %v", err)
	}
	deadline := time.Now().Add(1500 * time.Millisecond)
	for time.Now().Before(deadline) {
		if _, ok := member(a, "intruder"); ok {
			t.Fatal("a member with the wrong gossip key appeared")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestTags(t *testing.T) {
	a, err := New(Config{Role: RoleReceiver, Iface: "lo", Bind: "127.0.0.1:7946", GossipKey: testGossipKey, Logger: testLog(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer a.root.Close()
	tags, err := a.tags(&net.TCPAddr{IP: net.IPv6unspecified, Port: 7443})
	if err != nil {
		t.Fatal(err)
	}
	if tags["grpc"] != "127.0.0.1:7443" || tags["role"] != "receiver" {
		t.Errorf("tags: %v", tags)
	}
	if n := gossip.EncodedBytes(tags); n >= gossip.MaxTagBytes/2 {
		t.Errorf("typical tags take %d bytes", n)
	}
	a.cfg.Version = strings.Repeat("v", 600)
	if _, err := a.tags(&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1}); err == nil {
		t.Error("600-byte tags accepted")
	}

	// The largest tags a receiver announces, with a 64-byte version.
	mac, _ := net.ParseMAC("ff:ff:ff:ff:ff:ff")
	worst, err := gossip.Tags{
		Role: RoleReceiver, GRPC: "[ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff]:65535", Iface: strings.Repeat("i", 15),
		NUMA: -1, Queues: 65535, SpeedMbps: 8000000, Backends: []string{"kernel", "xdp", "afpacket"}, Version: strings.Repeat("v", 64),
		DataIPs: addrs("255.255.255.255", "fe80::1", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "10.0.0.1"), DataMAC: mac,
	}.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if worst["ips"] != "255.255.255.255,ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff" || worst["mac"] != "ff:ff:ff:ff:ff:ff" {
		t.Errorf("data tags: %v", worst)
	}
	for k := range tags { // a tag added to tags() must be sized here too
		if _, ok := worst[k]; !ok {
			t.Errorf("tag %q is announced but not in the largest-tags case", k)
		}
	}
	if n := gossip.EncodedBytes(worst); n >= gossip.MaxTagBytes-64 {
		t.Errorf("the largest tags take %d bytes of serf's %d: a version 64 bytes longer would not fit", n, gossip.MaxTagBytes)
	}
}

// A receiver announces its interface's MAC and its first IPv4 and first
// IPv6 address that is not link-local (a sender's data tags announce none).
func TestDataTags(t *testing.T) {
	for _, tc := range []struct {
		role Role
		link ifaceInfo
		want map[string]string
	}{
		{RoleReceiver, ifaceInfo{mac: mustMAC("02:00:00:00:00:02"), addrs: addrs("198.18.0.2", "198.18.0.3")}, map[string]string{"ips": "198.18.0.2", "mac": "02:00:00:00:00:02"}},
		{RoleBoth, ifaceInfo{addrs: addrs("fe80::1", "2001:db8::2", "198.18.0.2")}, map[string]string{"ips": "198.18.0.2,2001:db8::2"}},
		{RoleReceiver, ifaceInfo{mac: mustMAC("02:00:00:00:00:02"), addrs: append(addrs("fe80::1"), netip.Addr{})}, map[string]string{"mac": "02:00:00:00:00:02"}},
		{RoleReceiver, ifaceInfo{}, map[string]string{}},
		{RoleSender, ifaceInfo{mac: mustMAC("02:00:00:00:00:02"), addrs: addrs("198.18.0.2")}, map[string]string{}},
	} {
		a, err := New(Config{Role: tc.role, Iface: "data0", Bind: "127.0.0.1:7946", GossipKey: testGossipKey, AllowMgmtIface: true, Logger: testLog(t),
			netOS: fakeNetOS{addrs: map[string][]netip.Addr{"data0": tc.link.addrs}, macs: map[string]net.HardwareAddr{"data0": tc.link.mac}}})
		if err != nil {
			t.Fatal(err)
		}
		tags, err := a.tags(&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 7443})
		a.root.Close()
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, k := range []string{"ips", "mac"} {
			if v, ok := tags[k]; ok {
				got[k] = v
			}
		}
		if !maps.Equal(got, tc.want) {
			t.Errorf("%s on %v: data tags %v, want %v", tc.role, tc.link, got, tc.want)
		}
	}
}

func mustMAC(s string) net.HardwareAddr {
	m, err := net.ParseMAC(s)
	if err != nil {
		panic(err)
	}
	return m
}
