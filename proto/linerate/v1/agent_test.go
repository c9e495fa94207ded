package lineratev1_test

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/health"
	healthgrpc "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/linerate/linerate/internal/cluster/mtls"
	pb "github.com/linerate/linerate/proto/linerate/v1"
)

// fakeAgent answers every RPC with a canned response and records the
// requests it got, so a test can check both directions of the wire.
type fakeAgent struct {
	pb.UnimplementedAgentServer
	resp map[string]proto.Message // by method name

	mu   sync.Mutex
	got  map[string]proto.Message
	done chan struct{} // closed when a Watch handler returns
}

func (f *fakeAgent) record(method string, req proto.Message) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.got[method] = req
}

func (f *fakeAgent) received(method string) proto.Message {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.got[method]
}

// answer records req and returns the canned response of method, or the
// error the request asks for (lease_id "expired").
func answer[Resp proto.Message](f *fakeAgent, method string, req proto.Message) (Resp, error) {
	f.record(method, req)
	var zero Resp
	if l, ok := req.(interface{ GetLeaseId() string }); ok && l.GetLeaseId() == "expired" {
		return zero, status.Errorf(codes.FailedPrecondition, "lease %q expired at 12:00:00: acquire a new one", l.GetLeaseId())
	}
	return f.resp[method].(Resp), nil
}

func (f *fakeAgent) Describe(_ context.Context, r *pb.DescribeRequest) (*pb.DescribeResponse, error) {
	return answer[*pb.DescribeResponse](f, "Describe", r)
}
func (f *fakeAgent) Clock(_ context.Context, r *pb.ClockRequest) (*pb.ClockResponse, error) {
	return answer[*pb.ClockResponse](f, "Clock", r)
}
func (f *fakeAgent) AcquireLease(_ context.Context, r *pb.AcquireLeaseRequest) (*pb.AcquireLeaseResponse, error) {
	return answer[*pb.AcquireLeaseResponse](f, "AcquireLease", r)
}
func (f *fakeAgent) RenewLease(_ context.Context, r *pb.RenewLeaseRequest) (*pb.RenewLeaseResponse, error) {
	return answer[*pb.RenewLeaseResponse](f, "RenewLease", r)
}
func (f *fakeAgent) ReleaseLease(_ context.Context, r *pb.ReleaseLeaseRequest) (*pb.ReleaseLeaseResponse, error) {
	return answer[*pb.ReleaseLeaseResponse](f, "ReleaseLease", r)
}
func (f *fakeAgent) Tune(_ context.Context, r *pb.TuneRequest) (*pb.TuneResponse, error) {
	return answer[*pb.TuneResponse](f, "Tune", r)
}
func (f *fakeAgent) Restore(_ context.Context, r *pb.RestoreRequest) (*pb.RestoreResponse, error) {
	return answer[*pb.RestoreResponse](f, "Restore", r)
}
func (f *fakeAgent) Arm(_ context.Context, r *pb.ArmRequest) (*pb.ArmResponse, error) {
	return answer[*pb.ArmResponse](f, "Arm", r)
}
func (f *fakeAgent) Collect(_ context.Context, r *pb.CollectRequest) (*pb.CollectResponse, error) {
	return answer[*pb.CollectResponse](f, "Collect", r)
}
func (f *fakeAgent) Configure(_ context.Context, r *pb.ConfigureRequest) (*pb.ConfigureResponse, error) {
	return answer[*pb.ConfigureResponse](f, "Configure", r)
}
func (f *fakeAgent) Start(_ context.Context, r *pb.StartRequest) (*pb.StartResponse, error) {
	return answer[*pb.StartResponse](f, "Start", r)
}
func (f *fakeAgent) Stop(_ context.Context, r *pb.StopRequest) (*pb.StopResponse, error) {
	return answer[*pb.StopResponse](f, "Stop", r)
}
func (f *fakeAgent) Result(_ context.Context, r *pb.ResultRequest) (*pb.ResultResponse, error) {
	return answer[*pb.ResultResponse](f, "Result", r)
}

// Watch sends the canned samples; with an interval of 1h it then keeps the
// stream open until the client goes away, as a live agent does.
func (f *fakeAgent) Watch(r *pb.WatchRequest, stream grpc.ServerStreamingServer[pb.WatchResponse]) error {
	defer close(f.done)
	f.record("Watch", r)
	for _, s := range watchSamples() {
		if err := stream.Send(s); err != nil {
			return err
		}
	}
	if r.GetInterval().AsDuration() == time.Hour {
		<-stream.Context().Done()
		return stream.Context().Err()
	}
	return nil
}

// t0 is the fake run's start.
var t0 = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

func senderConfig() *pb.SenderConfig {
	vlan := uint32(100)
	return &pb.SenderConfig{
		Device: "eth1", Cpus: []int32{2, 3}, Count: 1000, Counts: []uint64{501, 499},
		Duration: durationpb.New(10 * time.Second), PktSize: 60, Burst: 1, CloneSkb: 0, RatePps: 100000, DelayNs: 0,
		DstMin: "198.18.1.2", DstMax: "198.18.1.3", SrcMin: "198.18.0.2", SrcMax: "198.18.0.9", SrcPerThread: true,
		DstMac: "02:00:00:00:01:02", SrcMac: "02:00:00:00:00:02",
		UdpSrcMin: 9, UdpSrcMax: 9, UdpDstMin: 9000, UdpDstMax: 9015,
		VlanId: &vlan, VlanPrio: 5, Queues: []int32{0, 1}, Flags: []string{"UDPCSUM", "!NO_TIMESTAMP"},
		XmitMode: "queue_xmit", AllowFallback: true, Backend: "auto",
	}
}

func irqChanges() []*pb.IrqChange {
	return []*pb.IrqChange{
		{Irq: 41, Name: "eth1-TxRx-0", Queue: 0, From: "0-7", To: "2", ReadBack: "2", Effective: "2", Status: "applied"},
		{Irq: 42, Name: "eth1-TxRx-1", Queue: 1, From: "0-7", To: "3", Status: "managed", Note: "kernel-managed IRQ"},
	}
}

// rpcs is every RPC of the service: a request with every field set, and
// the canned response with every field set.
func rpcs() map[string][2]proto.Message {
	return map[string][2]proto.Message{
		"Describe": {&pb.DescribeRequest{}, &pb.DescribeResponse{
			HostName: "sender-1", Kernel: "6.12.0-cloud-amd64", Version: "v0.3.0", Role: pb.Role_ROLE_BOTH,
			Nic: &pb.Nic{
				Iface: "eth1", Driver: "ixgbe", Pci: "0000:3b:00.0", NumaNode: 1, LocalCpus: []int32{2, 3},
				Queues: []*pb.NicQueue{
					{Queue: 0, Irq: 41, Name: "eth1-TxRx-0", Dir: "txrx", Current: "0-7", Effective: "1"},
					{Queue: 1, Irq: 42, Name: "eth1-TxRx-1", Dir: "txrx", Current: "0-7", Managed: true},
				},
				Skipped:       []*pb.SkippedIrq{{Irq: 40, Name: "eth1", Reason: "link/mailbox vector"}},
				Warnings:      []string{"irqbalance is running"},
				LinkSpeedMbps: 10000, Mac: "02:00:00:00:00:02", DataIps: []string{"198.18.0.2", "2001:db8::2"}, Mtu: 1500,
			},
			Backends: []string{"kernel", "afpacket"}, ReceiverMethods: []string{"xdp", "afpacket"},
			Lease: &pb.LeaseInfo{CoordinatorId: "coord", ExpiresAt: timestamppb.New(t0.Add(30 * time.Second))},
		}},
		"AcquireLease": {
			&pb.AcquireLeaseRequest{CoordinatorId: "coord", Ttl: durationpb.New(30 * time.Second)},
			&pb.AcquireLeaseResponse{LeaseId: "l-1", ExpiresAt: timestamppb.New(t0.Add(30 * time.Second)), Ttl: durationpb.New(30 * time.Second)},
		},
		"RenewLease": {
			&pb.RenewLeaseRequest{LeaseId: "l-1", Ttl: durationpb.New(20 * time.Second)},
			&pb.RenewLeaseResponse{ExpiresAt: timestamppb.New(t0.Add(50 * time.Second)), Ttl: durationpb.New(20 * time.Second)},
		},
		"ReleaseLease": {
			&pb.ReleaseLeaseRequest{LeaseId: "l-1", KeepTuning: true},
			&pb.ReleaseLeaseResponse{Changes: irqChanges(), Warnings: []string{"irq 42 is managed"}},
		},
		"Tune": {
			&pb.TuneRequest{LeaseId: "l-1", Threads: 2, ExcludeCpus: []int32{0, 1}, Irqbalance: "ignore"},
			&pb.TuneResponse{
				Iface: "eth1", Journal: "/var/lib/linerate/irq-eth1.json", NumaNode: 1,
				IrqMap:   []*pb.IrqMapping{{Queue: 0, Irq: 41, Name: "eth1-TxRx-0", Dir: "txrx", Cpu: 2, Effective: "2"}},
				Managed:  []*pb.IrqMapping{{Queue: 1, Irq: 42, Name: "eth1-TxRx-1", Dir: "txrx", Cpu: 3, Effective: "0-7"}},
				Skipped:  []*pb.SkippedIrq{{Irq: 40, Name: "eth1", Reason: "link/mailbox vector"}},
				Changes:  irqChanges(),
				Warnings: []string{"irqbalance runs; pinned anyway (--irqbalance=ignore)"},
			},
		},
		"Restore": {
			&pb.RestoreRequest{LeaseId: "l-1"},
			&pb.RestoreResponse{Iface: "eth1", Changes: irqChanges(), Warnings: []string{"w"}},
		},
		"Clock": {
			&pb.ClockRequest{},
			&pb.ClockResponse{ReceivedUnixNs: 1_780_000_000_123_456_789, SentUnixNs: 1_780_000_000_123_470_001, BootId: "4f1c6e0a-2b7d-4d3e-9f51-0c2a7b9e8d11"},
		},
		"Arm": {
			&pb.ArmRequest{LeaseId: "l-1", Iface: "eth1", Method: "auto", Pass: true, Repeats: 1, SeqCapacity: 1 << 24, MaxStreams: 64, MaxRanges: 8,
				ClockCorrections: []*pb.ClockCorrection{{DstPort: 10000, AddNs: -4_000_123_456}, {DstPort: 10001, AddNs: 9_000_000_001}}},
			&pb.ArmResponse{Armed: true, Method: "afpacket", MethodReason: "xdp: program load refused: operation not permitted", ArmedAt: timestamppb.New(t0)},
		},
		"Collect": {
			&pb.CollectRequest{LeaseId: "l-1", KeepArmed: true},
			&pb.CollectResponse{CollectedAt: timestamppb.New(t0.Add(12 * time.Second)), Report: &pb.ReceiverReport{
				Method: "xdp", MethodReason: "native XDP on eth1", Packets: 999, OtherPackets: 3,
				Streams: []*pb.StreamReport{{
					Src: "198.18.0.2", Dst: "198.18.1.2", DstPort: 9000, Received: 999, MaxSeq: 1000,
					Duplicates: 1, Reordered: 2, Missing: 2,
					MissingRanges: []*pb.SeqRange{{From: 17, To: 17}, {From: 400, To: 400}}, BeyondCapacity: 7,
				}},
				Link:      &pb.LinkCounters{RxPackets: 1002, RxDropped: 1, RxMissed: 2, RxFifo: 3, XdpPackets: 999, XdpDrops: 4},
				RingDrops: 5, OverflowPackets: 6,
			}},
		},
		"Configure": {
			&pb.ConfigureRequest{LeaseId: "l-1", Config: senderConfig()},
			&pb.ConfigureResponse{Accepted: true, Backend: "kernel", Config: senderConfig(), Warnings: []string{"burst 1 on veth"}},
		},
		"Start": {
			&pb.StartRequest{LeaseId: "l-1", At: timestamppb.New(t0.Add(2 * time.Second))},
			&pb.StartResponse{StartedAt: timestamppb.New(t0.Add(2*time.Second + 137*time.Microsecond))},
		},
		"Stop": {
			&pb.StopRequest{LeaseId: "l-1"},
			&pb.StopResponse{Stopped: true, StoppedAt: timestamppb.New(t0.Add(5 * time.Second))},
		},
		"Result": {
			&pb.ResultRequest{LeaseId: "l-1", Wait: true},
			&pb.ResultResponse{StartedAt: timestamppb.New(t0), StoppedAt: timestamppb.New(t0.Add(10 * time.Second)), Summary: &pb.SenderSummary{
				Backend: "kernel", Device: "eth1", Packets: 1000, Errors: 1, Usec: 10_000_000, Pps: 100,
				L2Bps: 51200, L1Bps: 67200, FrameBytes: 60,
				Threads: []*pb.ThreadSummary{
					{Cpu: 2, Entry: "eth1@2", Src: "198.18.0.2", Packets: 501, Errors: 1, Usec: 10_000_000, Pps: 50.1},
					{Cpu: 3, Entry: "eth1@3", Src: "198.18.0.3", Packets: 499, Usec: 9_999_000, Pps: 49.9},
				},
				Warnings: []string{"stopped by Stop"}, Interrupted: true,
			}},
		},
	}
}

func watchSamples() []*pb.WatchResponse {
	return []*pb.WatchResponse{
		{
			Time:     timestamppb.New(t0),
			Sender:   &pb.SenderSample{Phase: pb.Phase_PHASE_SCHEDULED},
			Receiver: &pb.ReceiverSample{Phase: pb.Phase_PHASE_ARMED, Elapsed: durationpb.New(time.Second)},
		},
		{
			Time: timestamppb.New(t0.Add(time.Second)),
			Sender: &pb.SenderSample{
				Phase: pb.Phase_PHASE_RUNNING, Elapsed: durationpb.New(time.Second), Packets: 100, Errors: 1, Bytes: 6000,
				Threads: []*pb.ThreadCounters{{Cpu: 2, Packets: 51, Errors: 1}, {Cpu: 3, Packets: 49}},
			},
			Receiver: &pb.ReceiverSample{
				Phase: pb.Phase_PHASE_ARMED, Elapsed: durationpb.New(2 * time.Second), Packets: 99, Errors: 2, Bytes: 5940,
				Streams: []*pb.StreamCounters{{Src: "198.18.0.2", Dst: "198.18.1.2", DstPort: 9000, Received: 99, MaxSeq: 100}},
			},
		},
		{Time: timestamppb.New(t0.Add(3 * time.Second)), Sender: &pb.SenderSample{Phase: pb.Phase_PHASE_FAILED, Error: "pktgen: device eth1 went down"}},
		{Time: timestamppb.New(t0.Add(4 * time.Second)), Receiver: &pb.ReceiverSample{Phase: pb.Phase_PHASE_FAILED, Error: "xdp program detached"}},
	}
}

// call invokes method on the client with req.
func call(ctx context.Context, c pb.AgentClient, method string, req proto.Message) (proto.Message, error) {
	switch r := req.(type) {
	case *pb.DescribeRequest:
		return c.Describe(ctx, r)
	case *pb.ClockRequest:
		return c.Clock(ctx, r)
	case *pb.AcquireLeaseRequest:
		return c.AcquireLease(ctx, r)
	case *pb.RenewLeaseRequest:
		return c.RenewLease(ctx, r)
	case *pb.ReleaseLeaseRequest:
		return c.ReleaseLease(ctx, r)
	case *pb.TuneRequest:
		return c.Tune(ctx, r)
	case *pb.RestoreRequest:
		return c.Restore(ctx, r)
	case *pb.ArmRequest:
		return c.Arm(ctx, r)
	case *pb.CollectRequest:
		return c.Collect(ctx, r)
	case *pb.ConfigureRequest:
		return c.Configure(ctx, r)
	case *pb.StartRequest:
		return c.Start(ctx, r)
	case *pb.StopRequest:
		return c.Stop(ctx, r)
	case *pb.ResultRequest:
		return c.Result(ctx, r)
	}
	return nil, errors.New("no client call for " + method)
}

type harness struct {
	agent  *fakeAgent
	health *health.Server
	conn   *grpc.ClientConn
	client pb.AgentClient
}

// start serves the fake agent and the health service over mutual TLS on a
// bufconn listener, as `linerate agent` will, and dials it as a
// coordinator.
func start(t *testing.T) *harness {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "tls")
	if _, _, err := mtls.Init(dir, mtls.CAOptions{}, false); err != nil {
		t.Fatal(err)
	}
	for _, o := range []mtls.LeafOptions{{Name: "agent1", Role: mtls.RoleAgent}, {Name: "coord", Role: mtls.RoleCoordinator}} {
		if _, _, err := mtls.Issue(dir, o, false); err != nil {
			t.Fatal(err)
		}
	}
	// As on a real host, no CA key beside the served certificates.
	if err := os.Remove(filepath.Join(dir, mtls.CAKeyFile)); err != nil {
		t.Fatal(err)
	}
	screds, err := mtls.ServerCredentials(mtls.Options{Dir: dir, Name: "agent1", PeerRoles: []mtls.Role{mtls.RoleCoordinator}})
	if err != nil {
		t.Fatal(err)
	}
	ccreds, err := mtls.ClientCredentials(mtls.Options{Dir: dir, Name: "coord", ServerName: "agent1", PeerRoles: []mtls.Role{mtls.RoleAgent}})
	if err != nil {
		t.Fatal(err)
	}

	h := &harness{agent: &fakeAgent{resp: map[string]proto.Message{}, got: map[string]proto.Message{}, done: make(chan struct{})}}
	for m, rr := range rpcs() {
		h.agent.resp[m] = rr[1]
	}
	lis := bufconn.Listen(1 << 20)
	srv := grpc.NewServer(mtls.ServerOptions(screds)...)
	pb.RegisterAgentServer(srv, h.agent)
	h.health = health.NewServer()
	healthgrpc.RegisterHealthServer(srv, h.health)
	h.health.SetServingStatus(pb.Agent_ServiceDesc.ServiceName, healthgrpc.HealthCheckResponse_SERVING)
	go srv.Serve(lis)
	t.Cleanup(srv.Stop)

	opts := append(mtls.DialOptions(ccreds), grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) {
		return lis.DialContext(ctx)
	}))
	h.conn, err = grpc.NewClient("passthrough:///agent1", opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.conn.Close() })
	h.client = pb.NewAgentClient(h.conn)
	return h
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// TestEveryRPCRoundTrips checks that each request arrives as sent and each
// response arrives as answered, field for field.
func TestEveryRPCRoundTrips(t *testing.T) {
	h := start(t)
	for method, rr := range rpcs() {
		t.Run(method, func(t *testing.T) {
			req, want := rr[0], rr[1]
			got, err := call(ctxT(t), h.client, method, req)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(req, h.agent.received(method), protocmp.Transform()); d != "" {
				t.Errorf("request changed on the wire (-sent +received):\n%s", d)
			}
			if d := cmp.Diff(want, got, protocmp.Transform()); d != "" {
				t.Errorf("response changed on the wire (-answered +received):\n%s", d)
			}
		})
	}
}

// TestEveryRPCIsCovered checks that every RPC in agent.proto has a case
// here: a new one needs one.
func TestEveryRPCIsCovered(t *testing.T) {
	covered := []string{"Watch"}
	for m := range rpcs() {
		covered = append(covered, m)
	}
	var all []string
	for _, m := range pb.Agent_ServiceDesc.Methods {
		all = append(all, m.MethodName)
	}
	for _, s := range pb.Agent_ServiceDesc.Streams {
		all = append(all, s.StreamName)
	}
	slices.Sort(all)
	slices.Sort(covered)
	if !slices.Equal(all, covered) {
		t.Errorf("service has %v, tests cover %v", all, covered)
	}
}

func TestWatchStreamsUntilEOF(t *testing.T) {
	h := start(t)
	req := &pb.WatchRequest{Interval: durationpb.New(250 * time.Millisecond)}
	stream, err := h.client.Watch(ctxT(t), req)
	if err != nil {
		t.Fatal(err)
	}
	var got []*pb.WatchResponse
	for {
		s, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, s)
	}
	if d := cmp.Diff(watchSamples(), got, protocmp.Transform()); d != "" {
		t.Errorf("samples (-sent +received):\n%s", d)
	}
	if d := cmp.Diff(req, h.agent.received("Watch"), protocmp.Transform()); d != "" {
		t.Errorf("request (-sent +received):\n%s", d)
	}
}

// TestWatchCancel checks that a watcher that goes away ends the server's
// stream.
func TestWatchCancel(t *testing.T) {
	h := start(t)
	ctx, cancel := context.WithCancel(ctxT(t))
	stream, err := h.client.Watch(ctx, &pb.WatchRequest{Interval: durationpb.New(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	for range watchSamples() {
		if _, err := stream.Recv(); err != nil {
			t.Fatal(err)
		}
	}
	cancel()
	if _, err := stream.Recv(); status.Code(err) != codes.Canceled {
		t.Errorf("Recv after cancel: %v, want Canceled", err)
	}
	select {
	case <-h.agent.done:
	case <-time.After(10 * time.Second):
		t.Fatal("the server's Watch handler did not return after the client cancelled")
	}
}

// TestStatusCodesCrossTheWire checks that the documented error codes reach
// the caller with their message.
func TestStatusCodesCrossTheWire(t *testing.T) {
	h := start(t)
	_, err := h.client.Tune(ctxT(t), &pb.TuneRequest{LeaseId: "expired"})
	if st := status.Convert(err); st.Code() != codes.FailedPrecondition || st.Message() != `lease "expired" expired at 12:00:00: acquire a new one` {
		t.Errorf("Tune with an expired lease: %v", err)
	}
}

func TestHealth(t *testing.T) {
	h := start(t)
	hc := healthgrpc.NewHealthClient(h.conn)
	for _, svc := range []string{"", "linerate.v1.Agent"} {
		resp, err := hc.Check(ctxT(t), &healthgrpc.HealthCheckRequest{Service: svc})
		if err != nil || resp.GetStatus() != healthgrpc.HealthCheckResponse_SERVING {
			t.Errorf("Check(%q) = %v, %v; want SERVING", svc, resp, err)
		}
	}
	if _, err := hc.Check(ctxT(t), &healthgrpc.HealthCheckRequest{Service: "nope"}); status.Code(err) != codes.NotFound {
		t.Errorf("Check(unknown service) = %v, want NotFound", err)
	}
	// Draining: the agent flips everything to NOT_SERVING before it stops.
	watch, err := hc.Watch(ctxT(t), &healthgrpc.HealthCheckRequest{Service: "linerate.v1.Agent"})
	if err != nil {
		t.Fatal(err)
	}
	if first, err := watch.Recv(); err != nil || first.GetStatus() != healthgrpc.HealthCheckResponse_SERVING {
		t.Fatalf("health watch: %v, %v", first, err)
	}
	h.health.Shutdown()
	if next, err := watch.Recv(); err != nil || next.GetStatus() != healthgrpc.HealthCheckResponse_NOT_SERVING {
		t.Errorf("after Shutdown: %v, %v; want NOT_SERVING", next, err)
	}
	resp, err := hc.Check(ctxT(t), &healthgrpc.HealthCheckRequest{})
	if err != nil || resp.GetStatus() != healthgrpc.HealthCheckResponse_NOT_SERVING {
		t.Errorf("Check after Shutdown = %v, %v", resp, err)
	}
}
