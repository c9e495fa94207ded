//go:build linux && traffic

package agent

import (
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/linerate/linerate/internal/netns"
	"github.com/linerate/linerate/internal/netns/nstest"
	"github.com/linerate/linerate/pktgen/pktgentest"
	lineratev1 "github.com/linerate/linerate/proto/linerate/v1"
)

// TestRailsOverGRPC drives a real agent (sender and receiver on lra, in a
// namespace that also holds another interface, eth0) over mutual-TLS gRPC
// with what the attacker sent: Configure on eth0 with a spoofed
// src_mac and VLAN 100, Arm on eth0, a broadcast destination; each is
// refused naming the field, and nothing is attached or sent on either
// interface. Then a default route appears on lra while the agent runs:
// Arm, Tune and Configure are refused from that request on.
func TestRailsOverGRPC(t *testing.T) {
	p := nstest.NewPair(t, 1)
	_, _, err := netns.Veth(p.A.NS, "eth0", p.A.NS, "eth0p", netns.VethOptions{AddrA: netip.MustParsePrefix("198.18.1.1/24")})
	if err != nil {
		t.Fatal(err)
	}
	certs := testCerts(t)
	a := startAgent(t, Config{Name: "both", Role: RoleBoth, Iface: "lra", ThreadInit: pktgentest.Enter(p.A.NS.Name),
		AllowDst: []netip.Prefix{netip.MustParsePrefix("198.18.0.0/24")}}, certs)
	c := dial(t, a, certs, "coord")
	ctx := ctxT(t, 20*time.Second)
	l, err := c.AcquireLease(ctx, &lineratev1.AcquireLeaseRequest{CoordinatorId: "c1"})
	if err != nil {
		t.Fatal(err)
	}
	attrs := func(name string) *netlink.LinkAttrs {
		t.Helper()
		var a *netlink.LinkAttrs
		if err := p.A.NS.Do(func() error {
			link, err := netlink.LinkByName(name)
			if err == nil {
				a = link.Attrs()
			}
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return a
	}
	xdp := func(name string) bool { a := attrs(name); return a.Xdp != nil && a.Xdp.Attached }
	txPackets := func(name string) uint64 { return attrs(name).Statistics.TxPackets }
	refused := func(err error, code codes.Code, want, what string) {
		t.Helper()
		if status.Code(err) != code || !strings.Contains(status.Convert(err).Message(), want) {
			t.Errorf("%s: got %v, want %s with %q", what, err, code, want)
		}
	}
	txBefore := map[string]uint64{"lra": txPackets("lra"), "eth0": txPackets("eth0")}

	vlan := uint32(100)
	send := func(edit func(*lineratev1.SenderConfig)) error {
		cfg := &lineratev1.SenderConfig{Cpus: []int32{0}, Count: 1000, PktSize: 64, DstMin: "198.18.0.2", DstMac: p.B.MAC.String(), Backend: "afpacket"}
		edit(cfg)
		_, err := c.Configure(ctx, &lineratev1.ConfigureRequest{LeaseId: l.LeaseId, Config: cfg})
		return err
	}
	refused(send(func(cfg *lineratev1.SenderConfig) {
		cfg.Device, cfg.SrcMac, cfg.VlanId = "eth0", "02:00:00:00:66:66", &vlan
	}),
		codes.InvalidArgument, `config.device "eth0": this agent owns only its --iface lra`, "configure on eth0, spoofed, VLAN 100")
	refused(send(func(cfg *lineratev1.SenderConfig) { cfg.SrcMac = "02:00:00:00:66:66" }),
		codes.PermissionDenied, "config.src_mac 02:00:00:00:66:66: not lra's own MAC "+p.A.MAC.String(), "a spoofed src_mac")
	refused(send(func(cfg *lineratev1.SenderConfig) { cfg.VlanId = &vlan }),
		codes.PermissionDenied, "config.vlan_id 100: the agent allows no VLAN (no --allow-vlan)", "VLAN 100")
	refused(send(func(cfg *lineratev1.SenderConfig) { cfg.DstMac = "ff:ff:ff:ff:ff:ff" }),
		codes.InvalidArgument, "config.dst_mac ff:ff:ff:ff:ff:ff: the broadcast MAC", "broadcast inside --allow-dst")
	_, err = c.Start(ctx, &lineratev1.StartRequest{LeaseId: l.LeaseId})
	wantCode(t, err, codes.FailedPrecondition, "start after every Configure was refused")

	_, err = c.Arm(ctx, &lineratev1.ArmRequest{LeaseId: l.LeaseId, Iface: "eth0", Method: "xdp"})
	refused(err, codes.InvalidArgument, `iface "eth0": this agent owns only its --iface lra`, "arm on eth0")
	if xdp("eth0") || xdp("lra") {
		t.Errorf("after the refusals: XDP on eth0 %v, on lra %v", xdp("eth0"), xdp("lra"))
	}
	// The agent's own interface is armed (XDP on lra, still none on eth0)
	// and sends from its own MAC.
	if _, err := c.Arm(ctx, &lineratev1.ArmRequest{LeaseId: l.LeaseId, Iface: "lra", Method: "xdp"}); err != nil {
		t.Fatalf("arm on lra: %v", err)
	}
	if !xdp("lra") || xdp("eth0") {
		t.Errorf("armed on lra: XDP on lra %v, on eth0 %v", xdp("lra"), xdp("eth0"))
	}
	if _, err := c.Collect(ctx, &lineratev1.CollectRequest{LeaseId: l.LeaseId}); err != nil {
		t.Fatal(err)
	}
	if err := send(func(cfg *lineratev1.SenderConfig) { cfg.Device, cfg.SrcMac = "lra", p.A.MAC.String() }); err != nil {
		t.Errorf("configure on lra from its own MAC: %v", err)
	}
	if got := txPackets("eth0"); got != txBefore["eth0"] {
		t.Errorf("eth0 sent %d packets", got-txBefore["eth0"])
	}

	// A default route on lra, added while the agent runs.
	if err := p.A.NS.Do(func() error {
		return netlink.RouteAdd(&netlink.Route{LinkIndex: p.A.Index, Gw: net.ParseIP("198.18.0.2")})
	}); err != nil {
		t.Fatal(err)
	}
	_, err = c.Arm(ctx, &lineratev1.ArmRequest{LeaseId: l.LeaseId, Method: "xdp"})
	refused(err, codes.PermissionDenied, "arm: agent: data interface is a management interface: --iface lra carries the default route", "arm on the default route")
	_, err = c.Tune(ctx, &lineratev1.TuneRequest{LeaseId: l.LeaseId, Irqbalance: "ignore"})
	refused(err, codes.PermissionDenied, "tune: agent: data interface is a management interface: --iface lra carries the default route", "tune on the default route")
	refused(send(func(*lineratev1.SenderConfig) {}), codes.PermissionDenied, "configure: agent: data interface is a management interface", "configure on the default route")
	if xdp("lra") || xdp("eth0") {
		t.Errorf("after the refusals on the default route: XDP on lra %v, on eth0 %v", xdp("lra"), xdp("eth0"))
	}
	if got := txPackets("lra"); got != txBefore["lra"] {
		t.Errorf("lra sent %d packets, and no send was started", got-txBefore["lra"])
	}
}
