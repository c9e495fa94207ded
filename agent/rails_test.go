package agent

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/peer"

	"github.com/linerate/linerate/pktgen"
	"github.com/linerate/linerate/receiver"
)

func mac(t *testing.T, s string) net.HardwareAddr {
	t.Helper()
	m, err := net.ParseMAC(s)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// wantCodeOf checks err's kind, message and gRPC code.
func wantCodeOf(t *testing.T, err, kind error, code codes.Code, msg, what string) {
	t.Helper()
	wantKind(t, err, kind, msg, what)
	if got := grpcCode(err); got != code {
		t.Errorf("%s: code %v, want %v", what, got, code)
	}
}

func TestCheckIface(t *testing.T) {
	for _, v := range []string{"", "data0"} {
		if err := checkIface("config.device", v, "data0"); err != nil {
			t.Errorf("%q: %v", v, err)
		}
	}
	wantCodeOf(t, checkIface("config.device", "eth0", "data0"), ErrInvalid, codes.InvalidArgument,
		`config.device "eth0": this agent owns only its --iface data0: give data0 or leave config.device empty`, "another interface")
}

// railHost is a sender on data0 (MAC 02:00:00:00:00:01) whose destination
// rails allow 198.18.0.0/15 outright, so that only the frame rails decide.
func railHost(t *testing.T, frames frameRails) *configurer {
	t.Helper()
	c := configHost(t)
	c.netOSMAC(t, "data0", "02:00:00:00:00:01")
	c.frames = frames
	c.allowDst = []netip.Prefix{netip.MustParsePrefix("198.18.0.0/15")}
	return c
}

// netOSMAC gives the fake host's interface a MAC.
func (c *configurer) netOSMAC(t *testing.T, iface, m string) {
	t.Helper()
	os := c.inv.netOS.(fakeNetOS)
	os.macs = map[string]net.HardwareAddr{iface: mac(t, m)}
	c.inv.netOS = os
}

func TestFrameRails(t *testing.T) {
	for _, tc := range []struct {
		name   string
		frames frameRails
		edit   func(*pktgen.Config)
		kind   error  // nil: allowed
		want   string // in the refusal
	}{
		{name: "defaults", edit: func(*pktgen.Config) {}},
		{name: "src_mac the device's own", edit: func(c *pktgen.Config) { c.SrcMAC = mac(t, "02:00:00:00:00:01") }},
		{name: "spoofed src_mac", edit: func(c *pktgen.Config) { c.SrcMAC = mac(t, "02:00:00:00:00:99") }, kind: ErrRefused,
			want: "config.src_mac 02:00:00:00:00:99: not data0's own MAC 02:00:00:00:00:01 (no --allow-src-mac); leave src_mac empty to send from 02:00:00:00:00:01, or start the sender agent with --allow-src-mac 02:00:00:00:00:99"},
		{name: "allowed src_mac", frames: frameRails{srcMACs: []net.HardwareAddr{mac(t, "02:00:00:00:00:99")}},
			edit: func(c *pktgen.Config) { c.SrcMAC = mac(t, "02:00:00:00:00:99") }},
		{name: "src_mac not in the list", frames: frameRails{srcMACs: []net.HardwareAddr{mac(t, "02:00:00:00:00:98")}},
			edit: func(c *pktgen.Config) { c.SrcMAC = mac(t, "02:00:00:00:00:99") }, kind: ErrRefused,
			want: "not data0's own MAC 02:00:00:00:00:01 nor one of --allow-src-mac 02:00:00:00:00:98"},
		{name: "VLAN with none allowed", edit: func(c *pktgen.Config) { c.HasVLAN, c.VLANID = true, 100 }, kind: ErrRefused,
			want: "config.vlan_id 100: the agent allows no VLAN (no --allow-vlan); send untagged, or start the sender agent with --allow-vlan 100"},
		{name: "VLAN 0 is a tag too", edit: func(c *pktgen.Config) { c.HasVLAN, c.VLANID = true, 0 }, kind: ErrRefused, want: "config.vlan_id 0"},
		{name: "allowed VLAN", frames: frameRails{vlans: []int{100, 200}}, edit: func(c *pktgen.Config) { c.HasVLAN, c.VLANID, c.PktSize = true, 200, 64 }},
		{name: "other VLAN", frames: frameRails{vlans: []int{100, 101, 102, 200}}, edit: func(c *pktgen.Config) { c.HasVLAN, c.VLANID = true, 300 }, kind: ErrRefused,
			want: "config.vlan_id 300: not in the agent's --allow-vlan 100-102,200"},
		{name: "broadcast dst_mac inside --allow-dst", edit: func(c *pktgen.Config) { c.DstMAC = mac(t, "ff:ff:ff:ff:ff:ff") }, kind: ErrInvalid,
			want: "config.dst_mac ff:ff:ff:ff:ff:ff: the broadcast MAC (group bit set)"},
		{name: "multicast dst_mac", edit: func(c *pktgen.Config) { c.DstMAC = mac(t, "01:00:5e:00:00:01") }, kind: ErrInvalid,
			want: "config.dst_mac 01:00:5e:00:00:01: a multicast MAC"},
		{name: "IPv6 multicast thread_dst", edit: func(c *pktgen.Config) {
			c.ThreadDst = []pktgen.Dest{{Addr: c.DstMin, MAC: c.DstMAC}, {Addr: c.DstMin, MAC: mac(t, "33:33:00:00:00:01")}}
		}, kind: ErrInvalid, want: "config.thread_dst[1].mac 33:33:00:00:00:01: a multicast MAC"},
		{name: "random source MACs", edit: func(c *pktgen.Config) { c.Flags = []string{"UDPCSUM", "MACSRC_RND"} }, kind: ErrInvalid,
			want: "config.flags MACSRC_RND: random source MACs"},
		{name: "random destination MACs", edit: func(c *pktgen.Config) { c.Flags = []string{"MACDST_RND"} }, kind: ErrInvalid, want: "config.flags MACDST_RND"},
		{name: "random VLANs", frames: frameRails{vlans: []int{100}}, edit: func(c *pktgen.Config) { c.HasVLAN, c.VLANID, c.Flags = true, 100, []string{"VID_RND"} },
			kind: ErrInvalid, want: "config.flags VID_RND"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := railHost(t, tc.frames)
			cfg := sendConfig()
			tc.edit(&cfg)
			got, err := c.prepare(context.Background(), cfg, "")
			if tc.kind == nil {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if err := c.checkDestinations(context.Background(), &got.cfg); err != nil {
					t.Errorf("destination refused: %v", err)
				}
				return
			}
			wantKind(t, err, tc.kind, tc.want, tc.name)
		})
	}
	cfg := sendConfig()
	cfg.Flags = []string{"!MACSRC_RND", "!VID_RND"}
	if err := (frameRails{}).check(&cfg, nil); err != nil {
		t.Errorf("clearing the random flags: %v", err)
	}
	// A receiver's reflections carry a tag only from --allow-vlan too.
	rails := frameRails{vlans: []int{100}}
	if err := rails.checkReflectVLAN(0); err != nil {
		t.Errorf("untagged reflections refused: %v", err)
	}
	if err := rails.checkReflectVLAN(100); err != nil {
		t.Errorf("reflect_vlan 100 with --allow-vlan 100 refused: %v", err)
	}
	wantKind(t, rails.checkReflectVLAN(200), ErrRefused, "reflect_vlan 200: not in the agent's --allow-vlan 100; reflect untagged, or start the receiver agent with --allow-vlan 200", "reflect_vlan 200")
	wantKind(t, frameRails{}.checkReflectVLAN(7), ErrRefused, "reflect_vlan 7: the agent allows no VLAN (no --allow-vlan)", "reflect_vlan 7")
}

// Configure's device is the agent's interface or nothing; the default
// is the agent's.
func TestConfigureDevice(t *testing.T) {
	c := railHost(t, frameRails{})
	cfg := sendConfig()
	cfg.Device = "eth0"
	_, err := c.prepare(context.Background(), cfg, "")
	wantCodeOf(t, err, ErrInvalid, codes.InvalidArgument, `config.device "eth0": this agent owns only its --iface data0`, "another device")
	cfg.Device = ""
	got, err := c.prepare(context.Background(), cfg, "")
	if err != nil || got.cfg.Device != "data0" {
		t.Errorf("no device: %+v %v, want data0", got, err)
	}
}

func TestRailsConfig(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		want string // "" = accepted
	}{
		{"a test network", Config{AllowDst: []netip.Prefix{netip.MustParsePrefix("198.18.0.0/15"), netip.MustParsePrefix("10.0.0.0/8")}}, ""},
		{"everything", Config{AllowDst: []netip.Prefix{netip.MustParsePrefix("0.0.0.0/0")}},
			"--allow-dst 0.0.0.0/0: a prefix shorter than /8 covers so much that a sender could flood any host: give the test network's CIDR (such as 198.18.0.0/15), or add --allow-dst-any to allow it anyway"},
		{"IPv6 everything", Config{AllowDst: []netip.Prefix{netip.MustParsePrefix("2001:db8::/32"), netip.MustParsePrefix("::/0")}}, "--allow-dst ::/0: a prefix shorter than /8"},
		{"a /7", Config{AllowDst: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/7")}}, "--allow-dst 10.0.0.0/7"},
		{"everything, explicitly", Config{AllowDst: []netip.Prefix{netip.MustParsePrefix("0.0.0.0/0")}, AllowDstAny: true}, ""},
		{"IPv6 test range", Config{AllowDst: []netip.Prefix{netip.MustParsePrefix("2001:2::/48")}}, ""},
		{"IPv6 link-local", Config{AllowDst: []netip.Prefix{netip.MustParsePrefix("2001:2::/48"), netip.MustParsePrefix("fe80::/64")}},
			"--allow-dst fe80::/64: IPv6 link-local (fe80::/10), which is never a test destination: give the test network's global or unique-local prefix (such as 2001:2::/48)"},
		{"VLAN out of range", Config{AllowVLANs: []int{100, 4096}}, "--allow-vlan 4096: want a VLAN id 0-4095"},
		{"a group source MAC", Config{AllowSrcMACs: []net.HardwareAddr{mac(t, "01:00:5e:00:00:01")}}, "--allow-src-mac 01:00:5e:00:00:01: a group MAC"},
		{"not an Ethernet MAC", Config{AllowSrcMACs: []net.HardwareAddr{mac(t, "02:00:00:00:00:00:00:01")}}, "want an Ethernet MAC"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			cfg.Role, cfg.Iface, cfg.Logger = RoleSender, "data0", testLog(t)
			_, err := New(cfg)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("got %v, want %q", err, tc.want)
			}
		})
	}
}

// mgmtHost is a fake host whose data0 carries the default route.
var mgmtHost = fakeNetOS{defaults: []string{"data0"}, addrs: map[string][]netip.Addr{"data0": addrs("198.18.0.2")}}

// Arm, Tune, Configure and Start check the management rail at every
// request, whatever the role and what was checked at start, and Arm's
// interface is the agent's.
func TestRequestRails(t *testing.T) {
	ctx := context.Background()
	rx := unitService(t, RoleReceiver, mgmtHost)
	g, err := rx.leases.acquire(bg, nobody, "c1", nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = rx.arm(ctx, g.id, receiver.Options{Iface: "eth0"})
	wantCodeOf(t, err, ErrInvalid, codes.InvalidArgument, `iface "eth0": this agent owns only its --iface data0: give data0 or leave iface empty`, "arm on another interface")
	_, err = rx.arm(ctx, g.id, receiver.Options{})
	wantCodeOf(t, err, ErrRefused, codes.PermissionDenied,
		"arm: agent: data interface is a management interface: --iface data0 carries the default route, and a receiver counting on it (XDP attached, test packets dropped) could cut off the control traffic: give a separate data interface, or --allow-mgmt-iface to count on it anyway",
		"arm on the default route's interface")
	if !errors.Is(err, ErrMgmtIface) {
		t.Errorf("arm: %v is not ErrMgmtIface", err)
	}
	_, err = rx.tune(ctx, g.id, tuneOptions{irqbalance: "ignore"})
	wantCodeOf(t, err, ErrRefused, codes.PermissionDenied, "tune: agent: data interface is a management interface: --iface data0 carries the default route, and pinning its queue IRQs", "tune")
	if st := rx.rx.state(); st.phase != phaseIdle {
		t.Errorf("after the refusals the receiver is %s", st.phase)
	}

	// Allowed, the same requests go on to the host (which has no data0
	// to count on or topology to tune here).
	ok := unitService(t, RoleReceiver, mgmtHost)
	ok.mgmt.allow = true
	g, _ = ok.leases.acquire(bg, nobody, "c1", nil)
	_, err = ok.arm(ctx, g.id, receiver.Options{})
	wantKind(t, err, ErrHost, "arm data0: ", "arm allowed")
	_, err = ok.tune(ctx, g.id, tuneOptions{irqbalance: "ignore"})
	wantKind(t, err, ErrHost, "tune: inspect data0", "tune allowed")

	tx := unitService(t, RoleSender, mgmtHost)
	tx.conf.backend = countingBackend{}
	g, _ = tx.leases.acquire(bg, nobody, "c1", nil)
	_, err = tx.configure(ctx, g.id, sendConfig(), "", nil)
	wantCodeOf(t, err, ErrRefused, codes.PermissionDenied, "configure: agent: data interface is a management interface: --iface data0 carries the default route, and test traffic from it", "configure")
	_, err = tx.start(ctx, g.id, time.Time{})
	wantCodeOf(t, err, ErrRefused, codes.PermissionDenied, "start: agent: data interface is a management interface", "start")

	// The route gone, the same sender configures; when it comes back
	// before Start, Start is refused.
	clean := mgmtHost
	clean.defaults = nil
	tx.mgmt.netOS = clean
	tx.conf.allowDst = []netip.Prefix{netip.MustParsePrefix("198.18.0.0/15")}
	if _, err := tx.configure(ctx, g.id, sendConfig(), "", nil); err != nil {
		t.Fatalf("configure off the management interface: %v", err)
	}
	tx.mgmt.netOS = mgmtHost
	_, err = tx.start(ctx, g.id, time.Time{})
	wantKind(t, err, ErrRefused, "start: agent: data interface is a management interface", "start after the route came back")
	if st := tx.tx.state(); st.phase != phaseConfigured {
		t.Errorf("after the refused start the sender is %s, want still configured", st.phase)
	}
}

// A request that came in on an address of the data interface is refused:
// the control traffic is on it, whatever the agent's flags named.
func TestRequestLocalAddrRail(t *testing.T) {
	rx := unitService(t, RoleReceiver, fakeNetOS{addrs: map[string][]netip.Addr{"data0": addrs("198.18.0.2")}})
	g, _ := rx.leases.acquire(bg, nobody, "c1", nil)
	on := func(addr string) context.Context {
		return peer.NewContext(context.Background(), &peer.Peer{
			Addr:      &net.TCPAddr{IP: net.ParseIP("198.18.0.1"), Port: 40000},
			LocalAddr: &net.TCPAddr{IP: net.ParseIP(addr), Port: 7443},
		})
	}
	_, err := rx.arm(on("198.18.0.2"), g.id, receiver.Options{})
	wantCodeOf(t, err, ErrRefused, codes.PermissionDenied, "--iface data0 carries the address this request came in on 198.18.0.2", "a request over the data interface")
	_, err = rx.arm(on("10.0.0.5"), g.id, receiver.Options{})
	wantKind(t, err, ErrHost, "arm data0: ", "a request over another interface")
}

// A receiver on a management interface starts (warned: its Arm and Tune
// are refused); a sender there does not.
func TestStartRails(t *testing.T) {
	for _, tc := range []struct {
		role Role
		want string
	}{
		{RoleReceiver, ""},
		{RoleSender, "--iface data0 carries the default route, and test traffic from it"},
		{RoleBoth, "--allow-mgmt-iface to send from it anyway"},
	} {
		a, err := New(Config{Role: tc.role, Iface: "data0", GRPCAddr: "127.0.0.1:0", Logger: testLog(t), netOS: mgmtHost})
		if err != nil {
			t.Fatal(err)
		}
		err = a.checkRails(context.Background())
		a.root.Close()
		if (tc.want == "") != (err == nil) || (err != nil && (!errors.Is(err, ErrMgmtIface) || !strings.Contains(err.Error(), tc.want))) {
			t.Errorf("%s: %v, want %q", tc.role, err, tc.want)
		}
	}
}
