//go:build linux && traffic

package agent

import (
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/linerate/linerate/internal/cluster/gossip"
	"github.com/linerate/linerate/internal/netns/nstest"
	"github.com/linerate/linerate/pktgen/pktgentest"
	lineratev1 "github.com/linerate/linerate/proto/linerate/v1"
)

// pairAgents starts a sender agent on lra and a receiver agent on lrb of
// a new pair of namespaces (gossip and gRPC on the host's loopback, their
// metrics served), dials both as a coordinator over mutual TLS and waits
// until the sender sees the receiver.
func pairAgents(t *testing.T) (p *nstest.Pair, snd, rcv *Agent, sc, rc lineratev1.AgentClient) {
	t.Helper()
	p = nstest.NewPair(t, 1)
	if err := p.A.WaitUp(3 * time.Second); err != nil {
		t.Fatal(err)
	}
	certs := testCerts(t)
	snd = startAgent(t, Config{Name: "snd", Role: RoleSender, Iface: "lra", ThreadInit: pktgentest.Enter(p.A.NS.Name),
		Bind: "127.0.0.1:0", MetricsAddr: "127.0.0.1:0", serfHook: fastSerf}, certs)
	rcv = startAgent(t, Config{Name: "rcv", Role: RoleReceiver, Iface: "lrb", ThreadInit: pktgentest.Enter(p.B.NS.Name),
		Bind: "127.0.0.1:0", Join: []string{snd.GossipAddr()}, MetricsAddr: "127.0.0.1:0", serfHook: fastSerf}, certs)
	sc, rc = dial(t, snd, certs, "coord"), dial(t, rcv, certs, "coord")
	poll(t, 3*time.Second, "the sender sees the receiver", func() bool { _, ok := member(snd, "rcv"); return ok })
	return p, snd, rcv, sc, rc
}

// TestSendReceiveFlow drives a sender agent on lra and a receiver agent on
// lrb (two namespaces, gossip and gRPC on the host's loopback) through one
// run over mutual-TLS gRPC, and reads their metrics.
func TestSendReceiveFlow(t *testing.T) {
	p, snd, rcv, sc, rc := pairAgents(t)
	ctx := ctxT(t, 20*time.Second)
	if m, _ := member(snd, "rcv"); !slices.Equal(gossip.DecodeTags(m.Tags).DataIPs, []netip.Addr{netip.MustParseAddr("198.18.0.2")}) ||
		gossip.DecodeTags(m.Tags).DataMAC.String() != p.B.MAC.String() {
		t.Errorf("the receiver's data tags: %v", m.Tags)
	}

	rd, err := rc.Describe(ctx, &lineratev1.DescribeRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if rd.Nic.Mac != p.B.MAC.String() || len(rd.Nic.DataIps) != 1 || rd.Nic.DataIps[0] != "198.18.0.2" || rd.Nic.Mtu == 0 ||
		rd.Role != lineratev1.Role_ROLE_RECEIVER || len(rd.ReceiverMethods) == 0 || rd.Kernel == "" || rd.Nic.Driver != "veth" || rd.Nic.Model != "" {
		t.Errorf("receiver describe: %v", rd)
	}
	sd, err := sc.Describe(ctx, &lineratev1.DescribeRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(sd.Backends) == 0 || sd.Backends[len(sd.Backends)-1] != "afpacket" || sd.Nic.Mac != p.A.MAC.String() {
		t.Errorf("sender describe: %v", sd)
	}

	sl, err := sc.AcquireLease(ctx, &lineratev1.AcquireLeaseRequest{CoordinatorId: "c1"})
	if err != nil {
		t.Fatal(err)
	}
	rl, err := rc.AcquireLease(ctx, &lineratev1.AcquireLeaseRequest{CoordinatorId: "c1"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = rc.Arm(ctx, &lineratev1.ArmRequest{LeaseId: sl.LeaseId})
	wantCode(t, err, codes.FailedPrecondition, "arm with the other agent's lease")
	arm, err := rc.Arm(ctx, &lineratev1.ArmRequest{LeaseId: rl.LeaseId})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("receiver method %s: %s", arm.Method, arm.MethodReason)

	// Only to the receiver's address and MAC.
	for _, bad := range []struct{ dst, dstMax, mac, want string }{
		{"198.18.0.3", "", rd.Nic.Mac, "destination 198.18.0.3 is not a data address of a receiver"},
		{"198.18.0.2", "", p.A.MAC.String(), "dst_mac " + p.A.MAC.String() + " is not the data MAC of the receiver holding 198.18.0.2 (rcv 198.18.0.2 at " + rd.Nic.Mac + ")"},
	} {
		_, err := sc.Configure(ctx, &lineratev1.ConfigureRequest{LeaseId: sl.LeaseId, Config: &lineratev1.SenderConfig{
			Cpus: []int32{0}, Count: 2000, PktSize: 60, DstMin: bad.dst, DstMax: bad.dstMax, DstMac: bad.mac, Backend: "afpacket",
		}})
		wantCode(t, err, codes.PermissionDenied, "configure to "+bad.dst+"-"+bad.dstMax+" at "+bad.mac)
		if err == nil || !strings.Contains(err.Error(), bad.want) || !strings.Contains(err.Error(), "--allow-dst") {
			t.Errorf("refusal %v: want %q and --allow-dst in it", err, bad.want)
		}
	}
	cr, err := sc.Configure(ctx, &lineratev1.ConfigureRequest{LeaseId: sl.LeaseId, Config: &lineratev1.SenderConfig{
		Cpus: []int32{0}, Count: 2000, PktSize: 60, DstMin: "198.18.0.2", DstMac: rd.Nic.Mac, Backend: "afpacket",
	}})
	if err != nil {
		t.Fatal(err)
	}
	if cr.Backend != "afpacket" || cr.Config.Device != "lra" || cr.Config.SrcMin != "198.18.0.1" {
		t.Errorf("configure: %v", cr)
	}
	watch, err := sc.Watch(ctx, &lineratev1.WatchRequest{Interval: durationpb.New(200 * time.Millisecond)})
	if err != nil {
		t.Fatal(err)
	}
	at := time.Now().Add(100 * time.Millisecond)
	st, err := sc.Start(ctx, &lineratev1.StartRequest{LeaseId: sl.LeaseId, At: timestamppb.New(at)})
	if err != nil {
		t.Fatal(err)
	}
	if st.StartedAt.AsTime().Before(at) {
		t.Errorf("started at %s, before %s", st.StartedAt.AsTime(), at)
	}
	res, err := sc.Result(ctx, &lineratev1.ResultRequest{LeaseId: sl.LeaseId, Wait: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Summary.Packets != 2000 || res.Summary.Backend != "afpacket" || res.Summary.Interrupted {
		t.Errorf("result: %v", res.Summary)
	}
	for {
		s, err := watch.Recv()
		if err != nil {
			t.Fatalf("watch: %v", err)
		}
		if s.Sender.Phase == lineratev1.Phase_PHASE_DONE {
			if s.Sender.Packets != 2000 || s.Receiver != nil {
				t.Errorf("watch sample at done: %v", s)
			}
			break
		}
	}
	// The veth delivers synchronously, but give the receiver's ring a moment.
	poll(t, 3*time.Second, "receiver counts 2000", func() bool {
		c, err := rc.Collect(ctx, &lineratev1.CollectRequest{LeaseId: rl.LeaseId, KeepArmed: true})
		return err == nil && len(c.Report.Streams) == 1 && c.Report.Streams[0].Received == 2000
	})
	col, err := rc.Collect(ctx, &lineratev1.CollectRequest{LeaseId: rl.LeaseId})
	if err != nil {
		t.Fatal(err)
	}
	if len(col.Report.Streams) != 1 {
		t.Fatalf("streams: %v", col.Report)
	}
	s := col.Report.Streams[0]
	if s.Received != 2000 || s.MaxSeq != 2000 || s.Missing != 0 || s.Duplicates != 0 || s.Src != "198.18.0.1" || s.Dst != "198.18.0.2" {
		t.Errorf("stream: %v", s)
	}
	_, err = rc.Collect(ctx, &lineratev1.CollectRequest{LeaseId: rl.LeaseId})
	wantCode(t, err, codes.FailedPrecondition, "collect after disarm")
	info := `linerate_agent_info{backend="` + strings.Join(sd.Backends, ",") + `",iface="lra",role="sender",version="dev"}`
	wantMetrics(t, "sender", scrape(t, snd), map[string]float64{
		"linerate_agent_packets_sent_total": 2000, "linerate_agent_send_errors_total": 0, "linerate_agent_lease_held": 1, info: 1,
		`linerate_agent_runs_started_total{role="sender"}`: 1, `linerate_agent_runs_finished_total{role="sender"}`: 1, `linerate_agent_runs_failed_total{role="sender"}`: 0,
	})
	wantMetrics(t, "receiver", scrape(t, rcv), map[string]float64{
		"linerate_agent_packets_received_total": 2000, "linerate_agent_lease_held": 1,
		`linerate_agent_runs_started_total{role="receiver"}`: 1, `linerate_agent_runs_finished_total{role="receiver"}`: 1, `linerate_agent_runs_failed_total{role="receiver"}`: 0,
	})
	if st, err := sc.Stop(ctx, &lineratev1.StopRequest{LeaseId: sl.LeaseId}); err != nil || st.Stopped {
		t.Errorf("stop after the run: %v %v", st, err)
	}
	for _, c := range []struct {
		c  lineratev1.AgentClient
		id string
	}{{sc, sl.LeaseId}, {rc, rl.LeaseId}} {
		if _, err := c.c.ReleaseLease(ctx, &lineratev1.ReleaseLeaseRequest{LeaseId: c.id}); err != nil {
			t.Error(err)
		}
	}
	wantMetrics(t, "sender released", scrape(t, snd), map[string]float64{"linerate_agent_lease_held": 0})
}

// TestExpiryDisarmsAndStops checks that an expired lease stops a send that
// runs until stopped and disarms the receiver.
func TestExpiryDisarmsAndStops(t *testing.T) {
	p := nstest.NewPair(t, 1)
	if err := p.A.WaitUp(3 * time.Second); err != nil {
		t.Fatal(err)
	}
	certs := testCerts(t)
	// lrb runs no agent: its address is allowed by CIDR.
	ag := startAgent(t, Config{Name: "both", Role: RoleBoth, Iface: "lra", ThreadInit: pktgentest.Enter(p.A.NS.Name), MinLeaseTTL: 10 * time.Millisecond,
		AllowDst: []netip.Prefix{netip.MustParsePrefix("198.18.0.0/24")}}, certs)
	c := dial(t, ag, certs, "coord")
	ctx := ctxT(t, 20*time.Second)
	l, err := c.AcquireLease(ctx, &lineratev1.AcquireLeaseRequest{CoordinatorId: "c1", Ttl: durationpb.New(time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Arm(ctx, &lineratev1.ArmRequest{LeaseId: l.LeaseId, Method: "afpacket"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Configure(ctx, &lineratev1.ConfigureRequest{LeaseId: l.LeaseId, Config: &lineratev1.SenderConfig{
		Cpus: []int32{0}, PktSize: 60, DstMin: "198.18.0.2", DstMac: p.B.MAC.String(), Backend: "afpacket", RatePps: 1000, Duration: durationpb.New(30 * time.Second),
	}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Start(ctx, &lineratev1.StartRequest{LeaseId: l.LeaseId}); err != nil {
		t.Fatal(err)
	}
	w, err := c.Watch(ctx, &lineratev1.WatchRequest{})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		s, err := w.Recv()
		if err != nil {
			t.Fatal(err)
		}
		if s.Sender.Phase == lineratev1.Phase_PHASE_IDLE && s.Receiver.Phase == lineratev1.Phase_PHASE_IDLE {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not idle after the lease expired: %v", s)
		}
	}
	_, err = c.Result(ctx, &lineratev1.ResultRequest{LeaseId: l.LeaseId})
	wantCode(t, err, codes.FailedPrecondition, "result with the expired lease")
}
