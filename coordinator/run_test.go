package coordinator

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/linerate/linerate/internal/cluster/gossip"
	"github.com/linerate/linerate/pktgen"
	lineratev1 "github.com/linerate/linerate/proto/linerate/v1"
)

// fakeAgent is an Agent service with scripted counters: a sender "sends"
// sent packets per thread, a receiver reports what its peer's senders
// told it (minus lose per stream). Real agents are exercised by the lab
// end-to-end tests; this one lets every path of the driver be forced.
type fakeAgent struct {
	bootID string // its kernel's boot id ("": the fakes' common "boot-test")
	lineratev1.UnimplementedAgentServer
	name        string
	role        gossip.Role
	ip, mac     string
	threads     []string // sender: source address per thread
	sent        uint64   // per thread
	lose        uint64   // receiver: per stream
	hostDrops   uint64   // receiver: rx_dropped
	failIn      string   // RPC name that fails
	hangIn      string   // RPC name that never answers ("*": every one); its caller's deadline ends it
	hangResult  bool     // Result blocks until the call ends
	txDropped   uint64   // sender: the host's tx drops
	onConfigure func(*lineratev1.SenderConfig)
	memory      uint64                // receiver: the memory budget Describe announces
	overflow    uint64                // receiver: overflow_packets in its report
	irqVerify   *lineratev1.IrqVerify // where its queue IRQs fired (Result, Collect)
	// queueCPUs, when set, gives its NIC a queue IRQ per entry (IRQ 40+i)
	// and makes Tune pin queue i to CPU queueCPUs[i]; backends are the
	// sender backends Describe offers.
	queueCPUs []int32
	backends  []string
	methods   []string // the receiver methods Describe offers
	// watchSilent: its Watch stream sends one sample and then nothing,
	// never breaking (a host that vanished without a reset).
	watchSilent bool
	// leasedTo is the lease Describe shows (nil: free).
	leasedTo *lineratev1.LeaseInfo
	// clockOffset is how far its clock is ahead of the test's: what Clock
	// answers, Start's instant and its start time are on it.
	clockOffset time.Duration
	startAtReq  time.Time // the instant Start was given, on its clock
	// checks, when set, are the checks its n-th Describe answers (from
	// 1); fixed what its Tune answers it fixed.
	checks func(n int) []*lineratev1.HostCheck
	fixed  []*lineratev1.HostFix
	// facts, when set, are the facts its n-th Describe answers;
	// allowFixes the classes it allows; restoreSkips the keys of fixed
	// settings its release answers it skipped (the others it restored).
	facts        func(n int) *lineratev1.HostFacts
	allowFixes   []string
	restoreSkips []string
	// describes and tunes are the requests it was sent.
	describes []*lineratev1.DescribeRequest
	tunes     []*lineratev1.TuneRequest

	mu        sync.Mutex
	calls     []string
	lease     string
	released  bool
	startedAt time.Time
	expect    []*lineratev1.StreamReport // receiver: filled by the test's wiring
	armed     *lineratev1.ArmRequest     // receiver: the last Arm
}

func (f *fakeAgent) record(call string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, call)
	if f.failIn == call {
		return status.Errorf(codes.Internal, "%s: scripted failure", call)
	}
	return nil
}

func (f *fakeAgent) called(call string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range f.calls {
		if c == call {
			return true
		}
	}
	return false
}

func (f *fakeAgent) Describe(_ context.Context, req *lineratev1.DescribeRequest) (*lineratev1.DescribeResponse, error) {
	if err := f.record("Describe"); err != nil {
		return nil, err
	}
	f.mu.Lock()
	f.describes = append(f.describes, req)
	n := len(f.describes)
	f.mu.Unlock()
	var checks []*lineratev1.HostCheck
	if f.checks != nil {
		checks = f.checks(n)
	}
	var facts *lineratev1.HostFacts
	if f.facts != nil {
		facts = f.facts(n)
	}
	nic := &lineratev1.Nic{
		Iface: "eth1", Driver: "fake", Mac: f.mac, DataIps: []string{f.ip}, LinkSpeedMbps: 10000, LocalCpus: []int32{0, 1},
	}
	for i := range f.queueCPUs {
		nic.Queues = append(nic.Queues, &lineratev1.NicQueue{Queue: int32(i), Irq: int32(40 + i), Dir: "txrx"})
	}
	return &lineratev1.DescribeResponse{HostName: f.name, Kernel: "6.1-test", Nic: nic, Backends: f.backends, ReceiverMethods: f.methods,
		ReceiverMemoryBytes: f.memory, Clock: &lineratev1.Clock{BootId: cmp.Or(f.bootID, "boot-test"), EstErrorUs: 16}, Lease: f.leasedTo, Checks: checks,
		Facts: facts, AllowedFixes: f.allowFixes}, nil
}

func (f *fakeAgent) Tune(_ context.Context, req *lineratev1.TuneRequest) (*lineratev1.TuneResponse, error) {
	if err := f.record("Tune"); err != nil {
		return nil, err
	}
	f.mu.Lock()
	f.tunes = append(f.tunes, req)
	f.mu.Unlock()
	t := &lineratev1.TuneResponse{NumaNode: 1, Fixed: f.fixed}
	for i, c := range f.queueCPUs {
		t.IrqMap = append(t.IrqMap, &lineratev1.IrqMapping{Queue: int32(i), Irq: int32(40 + i), Cpu: c, Dir: "txrx"})
	}
	return t, nil
}

func (f *fakeAgent) AcquireLease(context.Context, *lineratev1.AcquireLeaseRequest) (*lineratev1.AcquireLeaseResponse, error) {
	if err := f.record("AcquireLease"); err != nil {
		return nil, err
	}
	f.mu.Lock()
	f.lease = "lease-" + f.name
	f.mu.Unlock()
	return &lineratev1.AcquireLeaseResponse{LeaseId: "lease-" + f.name}, nil
}

func (f *fakeAgent) RenewLease(context.Context, *lineratev1.RenewLeaseRequest) (*lineratev1.RenewLeaseResponse, error) {
	return &lineratev1.RenewLeaseResponse{}, f.record("RenewLease")
}

func (f *fakeAgent) ReleaseLease(context.Context, *lineratev1.ReleaseLeaseRequest) (*lineratev1.ReleaseLeaseResponse, error) {
	if err := f.record("ReleaseLease"); err != nil {
		return nil, err
	}
	f.mu.Lock()
	f.released = true
	f.mu.Unlock()
	r := &lineratev1.ReleaseLeaseResponse{}
	for _, x := range f.fixed {
		s := &lineratev1.RestoredSetting{Kind: x.Kind, Key: x.Key, Status: "restored"}
		if slices.Contains(f.restoreSkips, x.Key) {
			s.Status, s.Note = "skipped", "changed by someone else since"
		}
		r.Settings = append(r.Settings, s)
	}
	return r, nil
}

func (f *fakeAgent) Arm(_ context.Context, req *lineratev1.ArmRequest) (*lineratev1.ArmResponse, error) {
	f.mu.Lock()
	f.armed = req
	f.mu.Unlock()
	return &lineratev1.ArmResponse{Armed: true, Method: "xdp"}, f.record("Arm")
}

func (f *fakeAgent) Configure(_ context.Context, req *lineratev1.ConfigureRequest) (*lineratev1.ConfigureResponse, error) {
	if err := f.record("Configure"); err != nil {
		return nil, err
	}
	if f.onConfigure != nil {
		f.onConfigure(req.Config)
	}
	return &lineratev1.ConfigureResponse{Accepted: true, Backend: "kernel", Config: req.Config}, nil
}

func (f *fakeAgent) Start(ctx context.Context, req *lineratev1.StartRequest) (*lineratev1.StartResponse, error) {
	if err := f.record("Start"); err != nil {
		return nil, err
	}
	time.Sleep(time.Until(req.At.AsTime().Add(-f.clockOffset)))
	f.mu.Lock()
	f.startedAt, f.startAtReq = time.Now(), req.At.AsTime()
	f.mu.Unlock()
	return &lineratev1.StartResponse{StartedAt: timestamppb.New(f.startedAt.Add(f.clockOffset))}, nil
}

func (f *fakeAgent) Clock(context.Context, *lineratev1.ClockRequest) (*lineratev1.ClockResponse, error) {
	if err := f.record("Clock"); err != nil {
		return nil, err
	}
	in := time.Now().Add(f.clockOffset)
	return &lineratev1.ClockResponse{ReceivedUnixNs: in.UnixNano(), SentUnixNs: time.Now().Add(f.clockOffset).UnixNano(), BootId: cmp.Or(f.bootID, "boot-test")}, nil
}

func (f *fakeAgent) Stop(context.Context, *lineratev1.StopRequest) (*lineratev1.StopResponse, error) {
	return &lineratev1.StopResponse{}, f.record("Stop")
}

func (f *fakeAgent) Result(ctx context.Context, _ *lineratev1.ResultRequest) (*lineratev1.ResultResponse, error) {
	if err := f.record("Result"); err != nil {
		return nil, err
	}
	if f.hangResult {
		<-ctx.Done()
		return nil, status.FromContextError(ctx.Err()).Err()
	}
	s := &lineratev1.SenderSummary{Backend: "kernel", Usec: 1e6, TxDropped: f.txDropped}
	for i, src := range f.threads {
		s.Threads = append(s.Threads, &lineratev1.ThreadSummary{Cpu: int32(i), Src: src, Packets: f.sent, FirstFrameUnixNs: fakeT0 + uint64(i)*10_000})
		s.Packets += f.sent
	}
	s.Pps = float64(s.Packets)
	return &lineratev1.ResultResponse{Summary: s, IrqVerify: f.irqVerify}, nil
}

func (f *fakeAgent) Collect(context.Context, *lineratev1.CollectRequest) (*lineratev1.CollectResponse, error) {
	if err := f.record("Collect"); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	rep := &lineratev1.ReceiverReport{Method: "xdp", Link: &lineratev1.LinkCounters{RxDropped: f.hostDrops}, OverflowPackets: f.overflow, Packets: f.overflow}
	for _, e := range f.expect {
		s := proto.Clone(e).(*lineratev1.StreamReport)
		s.Received -= f.lose
		rep.Streams = append(rep.Streams, s)
		rep.Packets += s.Received
	}
	return &lineratev1.CollectResponse{Report: rep, IrqVerify: f.irqVerify}, nil
}

func (f *fakeAgent) Watch(_ *lineratev1.WatchRequest, stream grpc.ServerStreamingServer[lineratev1.WatchResponse]) error {
	for {
		resp := &lineratev1.WatchResponse{Time: timestamppb.Now(), Sender: &lineratev1.SenderSample{Phase: lineratev1.Phase_PHASE_RUNNING}}
		if f.role == gossip.RoleBoth { // a receiver's sample beside its sender's
			resp.Receiver = &lineratev1.ReceiverSample{Phase: lineratev1.Phase_PHASE_ARMED}
		}
		if err := stream.Send(resp); err != nil {
			return err
		}
		if f.watchSilent {
			<-stream.Context().Done()
			return nil
		}
		select {
		case <-stream.Context().Done():
			return nil
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// fakeCluster serves fake agents over bufconn and plays serf.
type fakeCluster struct {
	agents  map[string]*fakeAgent
	servers map[string]*grpc.Server
	lis     map[string]*bufconn.Listener
	events  chan Event
}

func newFakeCluster(t *testing.T, agents ...*fakeAgent) *fakeCluster {
	c := &fakeCluster{agents: map[string]*fakeAgent{}, servers: map[string]*grpc.Server{}, lis: map[string]*bufconn.Listener{}, events: make(chan Event, 16)}
	for _, a := range agents {
		lis := bufconn.Listen(1 << 20)
		srv := grpc.NewServer(grpc.UnaryInterceptor(func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			if a.hangIn == "*" || strings.HasSuffix(info.FullMethod, "/"+a.hangIn) {
				_ = a.record(info.FullMethod[strings.LastIndex(info.FullMethod, "/")+1:])
				<-ctx.Done() // never answers: only the caller's deadline ends the call
				return nil, status.FromContextError(ctx.Err()).Err()
			}
			return h(ctx, req)
		}))
		lineratev1.RegisterAgentServer(srv, a)
		go srv.Serve(lis)
		c.agents[a.name], c.servers[a.name], c.lis[a.name] = a, srv, lis
		t.Cleanup(srv.Stop)
	}
	return c
}

func (c *fakeCluster) Members() []Member {
	var out []Member
	for _, a := range c.agents {
		out = append(out, Member{Name: a.name, Tags: gossip.Tags{Role: a.role, GRPC: "bufconn:" + a.name}, Status: "alive"})
	}
	return out
}

func (c *fakeCluster) Subscribe() (<-chan Event, func()) { return c.events, func() {} }

func (c *fakeCluster) dial(m Member) (*grpc.ClientConn, error) {
	lis := c.lis[m.Name]
	return grpc.NewClient("passthrough:///"+m.Name,
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
}

// wire tells each receiver fake what its senders will send (the i-th
// host that sends, named senders first, then named receivers that send
// in a run both ways, on port 10000+i; a sender's threads split evenly
// over its flows in order), so that Collect answers like a real receiver.
func wire(spec Spec, c *fakeCluster) {
	_ = spec.Validate() // the pattern's default
	pairs, _ := spec.FlowPairs()
	var sending []string
	for _, name := range append(append([]string(nil), spec.Senders...), spec.Receivers...) {
		if roleIn(pairs, name).Sends() {
			sending = append(sending, name)
		}
	}
	for si, name := range sending {
		s := c.agents[name]
		var rcvs []*fakeAgent
		for _, p := range pairs {
			if p.Sender == name {
				rcvs = append(rcvs, c.agents[p.Receiver])
			}
		}
		per := len(s.threads) / len(rcvs)
		for j, src := range s.threads {
			r := rcvs[j/per]
			r.expect = append(r.expect, &lineratev1.StreamReport{Src: src, Dst: r.ip, DstPort: uint32(10000 + si), Received: s.sent, MaxSeq: s.sent,
				FirstArrivalUnixNs: fakeT0 + uint64(si)*100_000 + uint64(j)*10_000 + 5_000})
		}
	}
}

// fakeT0 is the fakes' first frame (Unix ns): thread i's first frame is
// i × 10 µs after it; sender i's stream j first arrives i × 100 µs +
// j × 10 µs + 5 µs after it.
const fakeT0 = 1_764_650_000_000_000_000

func sender(name, ip string, sent uint64, threads ...string) *fakeAgent {
	return &fakeAgent{name: name, role: "sender", ip: ip, mac: "02:00:00:00:00:01", threads: threads, sent: sent}
}

func receiver(name, ip string) *fakeAgent {
	return &fakeAgent{name: name, role: "receiver", ip: ip, mac: "02:00:00:00:01:01"}
}

func TestRunFanInBalances(t *testing.T) {
	s1 := sender("s1", "198.18.0.1", 1000, "198.18.0.1", "198.18.0.2")
	s2 := sender("s2", "198.18.0.2", 500, "198.18.0.2") // same source as s1's thread 1: the port tells flows apart
	r1 := receiver("r1", "198.18.0.101")
	r1.lose, r1.hostDrops = 10, 25
	s2.txDropped = 3
	c := newFakeCluster(t, s1, s2, r1)
	spec := Spec{Senders: []string{"s1", "s2"}, Receivers: []string{"r1"}, Pattern: FanIn, Count: 1000, Drain: time.Millisecond}
	wire(spec, c)
	var phases []string
	var mu sync.Mutex
	r := &Runner{Cluster: c, Dial: c.dial, OnPhase: func(p PhaseEvent) { mu.Lock(); phases = append(phases, p.Phase); mu.Unlock() }}
	res, err := r.Run(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != StatusOK || len(res.Flows) != 2 {
		t.Fatalf("status %s (%s), %d flows", res.Status, res.Error, len(res.Flows))
	}
	// s1: 2 streams × 1000 sent, 10 lost each; s2: 1 × 500, 10 lost.
	f1, f2 := res.Flows[0], res.Flows[1]
	if f1.Sent != 2000 || f1.Received != 1980 || f1.Lost != 20 || f1.Streams != 2 {
		t.Errorf("flow s1→r1: %+v", f1)
	}
	if f2.Sent != 500 || f2.Received != 490 || f2.Lost != 10 {
		t.Errorf("flow s2→r1: %+v", f2)
	}
	// s2's host dropped 3 of its 10; r1 dropped 25 itself, shared out over
	// its flows in order, once: 20 to s1's flow, the last 5 to s2's.
	if f1.LostSenderHost != 0 || f1.LostReceiverHost != 20 || f1.LostNetwork != 0 {
		t.Errorf("attribution s1: %d@tx %d@rx %d@net", f1.LostSenderHost, f1.LostReceiverHost, f1.LostNetwork)
	}
	if f2.LostSenderHost != 3 || f2.LostReceiverHost != 5 || f2.LostNetwork != 2 {
		t.Errorf("attribution s2: %d@tx %d@rx %d@net", f2.LostSenderHost, f2.LostReceiverHost, f2.LostNetwork)
	}
	if len(f1.StreamDetail) != 2 || f1.StreamDetail[1].Src != ip("198.18.0.2") || f1.StreamDetail[1].Lost != 10 || f1.StreamDetail[1].DstPort != 10000 {
		t.Errorf("stream detail of s1→r1: %+v", f1.StreamDetail)
	}
	// First frames 0, 10 µs (s1) and 0 (s2); first arrivals 5, 15 µs
	// (s1's) and 105 µs (s2's): every host on one boot id, one clock.
	if sp := res.StartSpread; sp == nil || sp.FirstFrame == nil || sp.FirstArrival == nil {
		t.Errorf("start spread: %+v, want both sides", sp)
	} else if ff, fa := sp.FirstFrame, sp.FirstArrival; ff.Streams != 3 || ff.P50US != 0 || ff.MaxUS != 10 || ff.Clocks != ClocksOne ||
		fa.Streams != 3 || fa.P50US != 10 || fa.MaxUS != 100 || fa.Clocks != ClocksOne || strings.Join(ff.Hosts, ",") != "s1,s2" {
		t.Errorf("start spread: first frame %+v, first arrival %+v", ff, fa)
	}
	if c := res.Hosts[0].Clock; c == nil || c.BootID != "boot-test" || c.EstErrorUS != 16 {
		t.Errorf("host clock: %+v", c)
	}
	want := []string{PhaseDiscover, PhaseDescribe, PhaseLease, PhaseTune, PhaseArm, PhaseConfigure, PhaseStart, PhaseRun, PhaseDrain, PhaseCollect, PhaseReconcile, PhaseRestore}
	if strings.Join(phases, ",") != strings.Join(want, ",") {
		t.Errorf("phases %v, want %v", phases, want)
	}
	for _, a := range []*fakeAgent{s1, s2, r1} {
		if !a.released {
			t.Errorf("%s not released", a.name)
		}
	}
	if res.StartSkewUS < 0 || res.StartSkewUS > 1e5 {
		t.Errorf("start skew %v µs", res.StartSkewUS)
	}
	if len(res.Hosts) != 3 || res.Hosts[2].Role != "receiver" || res.Hosts[2].HostDrops != 25 {
		t.Errorf("hosts: %+v", res.Hosts)
	}
}

func TestRunFailsNamingAgentAndPhase(t *testing.T) {
	for _, tc := range []struct {
		failIn, agent, phase string
	}{
		{"Describe", "r1", PhaseDescribe},
		{"AcquireLease", "s1", PhaseLease},
		{"Arm", "r1", PhaseArm},
		{"Configure", "s1", PhaseConfigure},
		{"Start", "s1", PhaseStart},
		{"Collect", "r1", PhaseCollect},
	} {
		t.Run(tc.failIn, func(t *testing.T) {
			s1 := sender("s1", "198.18.0.1", 100, "198.18.0.1")
			r1 := receiver("r1", "198.18.0.101")
			map[string]*fakeAgent{"s1": s1, "r1": r1}[tc.agent].failIn = tc.failIn
			c := newFakeCluster(t, s1, r1)
			spec := Spec{Senders: []string{"s1"}, Receivers: []string{"r1"}, Count: 100, Drain: time.Millisecond}
			wire(spec, c)
			res, err := (&Runner{Cluster: c, Dial: c.dial}).Run(context.Background(), spec)
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != StatusFailed || res.FailedPhase != tc.phase || !strings.Contains(res.Error, "agent "+tc.agent) || !strings.Contains(res.Error, "scripted failure") {
				t.Fatalf("status %s phase %q error %q", res.Status, res.FailedPhase, res.Error)
			}
			for _, a := range []*fakeAgent{s1, r1} {
				if a.called("AcquireLease") && a.failIn != "AcquireLease" && !a.released {
					t.Errorf("%s leased but not released", a.name)
				}
			}
		})
	}
}

func TestRunMemberFailureEndsRunQuickly(t *testing.T) {
	s1 := sender("s1", "198.18.0.1", 100, "198.18.0.1")
	s1.hangResult = true // a run that would never end by itself
	r1 := receiver("r1", "198.18.0.101")
	c := newFakeCluster(t, s1, r1)
	spec := Spec{Senders: []string{"s1"}, Receivers: []string{"r1"}, Duration: time.Hour, Drain: time.Millisecond}
	wire(spec, c)
	go func() {
		for !s1.called("Result") {
			time.Sleep(10 * time.Millisecond)
		}
		c.events <- Event{Member: Member{Name: "r1"}, Type: "member-failed"}
	}()
	t0 := time.Now()
	res, err := (&Runner{Cluster: c, Dial: c.dial}).Run(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != StatusFailed || res.FailedPhase != PhaseRun || !strings.Contains(res.Error, "agent r1") || !strings.Contains(res.Error, "failed") {
		t.Fatalf("status %s phase %q error %q", res.Status, res.FailedPhase, res.Error)
	}
	if d := time.Since(t0); d > 10*time.Second {
		t.Errorf("run took %s to fail", d)
	}
	if !s1.called("Stop") || !s1.released || !r1.released {
		t.Errorf("s1 stopped %t released %t, r1 released %t", s1.called("Stop"), s1.released, r1.released)
	}
}

func TestRunAgentGoneMidRun(t *testing.T) {
	s1 := sender("s1", "198.18.0.1", 100, "198.18.0.1")
	s1.hangResult = true
	r1 := receiver("r1", "198.18.0.101")
	c := newFakeCluster(t, s1, r1)
	spec := Spec{Senders: []string{"s1"}, Receivers: []string{"r1"}, Duration: time.Hour, Drain: time.Millisecond}
	wire(spec, c)
	go func() {
		for !s1.called("Result") {
			time.Sleep(10 * time.Millisecond)
		}
		c.servers["r1"].Stop() // the process is gone: its streams break
	}()
	res, err := (&Runner{Cluster: c, Dial: c.dial}).Run(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != StatusFailed || !strings.Contains(res.Error, "agent r1") {
		t.Fatalf("status %s error %q", res.Status, res.Error)
	}
	if !s1.released {
		t.Error("s1 not released")
	}
	if !strings.Contains(strings.Join(res.Hosts[1].Warnings, "\n"), "release lease") {
		t.Errorf("r1's failed release not reported: %v", res.Hosts[1].Warnings)
	}
}

func TestRunRefusesBeforeTouchingAgents(t *testing.T) {
	s1 := sender("s1", "198.18.0.1", 100, "198.18.0.1")
	r1 := receiver("r1", "198.18.0.101")
	c := newFakeCluster(t, s1, r1)
	for _, tc := range []struct {
		spec Spec
		want string
	}{
		{Spec{Senders: []string{"s1"}, Receivers: []string{"r1"}}, "neither a duration nor a count"},
		{Spec{Senders: []string{"s1"}, Receivers: []string{"r1"}, Count: 1, FrameSize: 40}, "frame size 40"},
		{Spec{Senders: []string{"s1"}, Receivers: []string{"r1"}, Count: 3, Threads: 4}, "count 3: fewer packets than the 4 threads per flow: want at least 4"},
		{Spec{Senders: []string{"s1"}, Receivers: []string{"r1"}, Count: 1, Pattern: "star"}, `pattern "star"`},
		{Spec{Senders: []string{"s1"}, Receivers: []string{"r1"}, Count: 1, Backend: "dpdk"}, `backend "dpdk"`},
		{Spec{Senders: []string{"s1", "s1"}, Receivers: []string{"r1", "r2"}, Count: 1}, "named twice"},
	} {
		_, err := (&Runner{Cluster: c, Dial: c.dial}).Run(context.Background(), tc.spec)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want %q", tc.spec, err, tc.want)
		}
	}
	res, err := (&Runner{Cluster: c, Dial: c.dial}).Run(context.Background(), Spec{Senders: []string{"r1"}, Receivers: []string{"s1"}, Count: 1})
	if err != nil || res.Status != StatusFailed || !strings.Contains(res.Error, "cannot be a sender") {
		t.Errorf("roles swapped: %v %+v", err, res)
	}
	res, err = (&Runner{Cluster: c, Dial: c.dial}).Run(context.Background(), Spec{Senders: []string{"s9"}, Receivers: []string{"r1"}, Count: 1})
	if err != nil || res.Status != StatusFailed || !strings.Contains(res.Error, "agent s9") || !strings.Contains(res.Error, "not a member") {
		t.Errorf("unknown agent: %v %+v", err, res)
	}
	for _, a := range []*fakeAgent{s1, r1} {
		if a.called("AcquireLease") {
			t.Errorf("%s leased by a run that could not start", a.name)
		}
	}
}

// A mesh: every sender feeds every receiver, one thread per flow with its
// own destination; each flow balances on its own.
func TestRunMesh(t *testing.T) {
	s1 := sender("s1", "198.18.0.1", 300, "198.18.0.1", "198.18.0.2")
	s2 := sender("s2", "198.18.0.2", 300, "198.18.0.2", "198.18.0.3")
	r1, r2 := receiver("r1", "198.18.0.101"), receiver("r2", "198.18.0.102")
	r2.mac, r2.lose = "02:00:00:00:01:02", 7
	c := newFakeCluster(t, s1, s2, r1, r2)
	var mu sync.Mutex
	configs := map[string]*lineratev1.SenderConfig{}
	for _, s := range []*fakeAgent{s1, s2} {
		s.onConfigure = func(cfg *lineratev1.SenderConfig) { mu.Lock(); configs[s.name] = cfg; mu.Unlock() }
	}
	spec := Spec{Senders: []string{"s1", "s2"}, Receivers: []string{"r1", "r2"}, Pattern: Mesh, Count: 300, Drain: time.Millisecond}
	wire(spec, c)
	res, err := (&Runner{Cluster: c, Dial: c.dial}).Run(context.Background(), spec)
	if err != nil || res.Status != StatusOK || len(res.Flows) != 4 {
		t.Fatalf("%v: status %s (%s), %d flows", err, res.Status, res.Error, len(res.Flows))
	}
	for _, f := range res.Flows {
		wantLost := uint64(0)
		if f.Receiver == "r2" {
			wantLost = 7
		}
		if f.Sent != 300 || f.Lost != wantLost || f.Streams != 1 {
			t.Errorf("flow %s→%s: sent %d lost %d streams %d", f.Sender, f.Receiver, f.Sent, f.Lost, f.Streams)
		}
	}
	cfg := configs["s2"]
	if len(cfg.ThreadDst) != 2 || cfg.ThreadDst[0].Ip != "198.18.0.101" || cfg.ThreadDst[1].Mac != "02:00:00:00:01:02" ||
		fmt.Sprint(cfg.Counts) != "[300 300]" || cfg.UdpDstMin != 10001 {
		t.Errorf("s2's config: %v", cfg)
	}
}

// An imix run hands pktgen the mix (sizes without FCS) instead of one
// size, and the rates use the mean frame.
func TestRunIMIX(t *testing.T) {
	s1 := sender("s1", "198.18.0.1", 100, "198.18.0.1")
	r1 := receiver("r1", "198.18.0.101")
	var cfg *lineratev1.SenderConfig
	s1.onConfigure = func(c *lineratev1.SenderConfig) { cfg = c }
	c := newFakeCluster(t, s1, r1)
	spec := Spec{Senders: []string{"s1"}, Receivers: []string{"r1"}, Count: 100, Drain: time.Millisecond,
		IMIX: pktgen.IMIX{{Size: 64, Weight: 7}, {Size: 570, Weight: 4}, {Size: 1518, Weight: 1}}}
	wire(spec, c)
	res, err := (&Runner{Cluster: c, Dial: c.dial}).Run(context.Background(), spec)
	if err != nil || res.Status != StatusOK {
		t.Fatalf("%v %+v", err, res)
	}
	if cfg.PktSize != 0 || len(cfg.Imix) != 3 || cfg.Imix[0].Size != 60 || cfg.Imix[2].Size != 1514 || cfg.Imix[1].Weight != 4 {
		t.Errorf("sender config: pkt_size %d imix %v", cfg.PktSize, cfg.Imix)
	}
	mean := (60*7 + 566*4 + 1514*1) / 12.0
	if f := res.Flows[0]; math.Abs(f.L2BPS-f.PPS*(mean+4)*8) > 1 {
		t.Errorf("L2 %.0f for %.0f pps of mean %.1f-byte frames", f.L2BPS, f.PPS, mean)
	}
	if _, err := (&Runner{Cluster: c, Dial: c.dial}).Run(context.Background(), Spec{Senders: []string{"s1"}, Receivers: []string{"r1"}, Count: 1,
		IMIX: pktgen.IMIX{{Size: 40, Weight: 1}}}); err == nil || !strings.Contains(err.Error(), "imix entry 40:1") {
		t.Errorf("bad imix: %v", err)
	}
}
