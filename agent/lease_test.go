package agent

import (
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/linerate/linerate/internal/cluster/mtls"
	"github.com/linerate/linerate/internal/fsfixture"
	lineratev1 "github.com/linerate/linerate/proto/linerate/v1"
	"github.com/linerate/linerate/topology"
)

// fixtureAgent runs a receiver agent on the 4-queue fixture host of
// topology's tests (eth0, IRQs 41-44), without gossip.
func fixtureAgent(t *testing.T, minTTL time.Duration) (*Agent, lineratev1.AgentClient, string, string) {
	t.Helper()
	root := t.TempDir()
	if err := fsfixture.UnpackFile(filepath.Join("..", "topology", "testdata", "apply-basic.tree"), root); err != nil {
		t.Fatal(err)
	}
	certs, state := testCerts(t), t.TempDir()
	a := startAgent(t, Config{Name: "agent1", Role: RoleReceiver, Iface: "eth0", AllowMgmtIface: true, Root: root, StateDir: state, MinLeaseTTL: minTTL, MetricsAddr: "127.0.0.1:0"}, certs)
	return a, dial(t, a, certs, "coord"), root, state
}

func affinity(t *testing.T, root string, irq int) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "proc", "irq", strconv.Itoa(irq), "smp_affinity_list"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestLeaseTuneRelease(t *testing.T) {
	a, c, root, state := fixtureAgent(t, 0)
	ctx := ctxT(t, 10*time.Second)

	d, err := c.Describe(ctx, &lineratev1.DescribeRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Role != lineratev1.Role_ROLE_RECEIVER || d.Nic.Driver != "ixgbe" || len(d.Nic.Queues) != 4 || d.Nic.NumaNode != 0 || d.Lease != nil {
		t.Errorf("describe: %v", d)
	}
	idle := map[string]float64{
		"linerate_agent_lease_held": 0, "linerate_agent_irqs_pinned": 0, "linerate_agent_tuning_journal_active": 0,
		`linerate_agent_info{backend="",iface="eth0",role="receiver",version="dev"}`: 1,
		`linerate_agent_runs_started_total{role="receiver"}`:                         0,
	}
	m := scrape(t, a)
	wantMetrics(t, "before the lease", m, idle)
	if _, ok := m[`linerate_agent_runs_started_total{role="sender"}`]; ok {
		t.Error("a receiver shows sender runs")
	}

	l, err := c.AcquireLease(ctx, &lineratev1.AcquireLeaseRequest{CoordinatorId: "c1"})
	if err != nil {
		t.Fatal(err)
	}
	// The holder's certificate with another coordinator_id is another run:
	// refused. Another certificate is refused whatever it gives
	// (TestLeaseBoundToCertificate).
	_, err = c.AcquireLease(ctx, &lineratev1.AcquireLeaseRequest{CoordinatorId: "c2"})
	wantCode(t, err, codes.AlreadyExists, "the holder's certificate, another coordinator_id")
	// The same certificate and coordinator_id is a retry: its lease back.
	again, err := c.AcquireLease(ctx, &lineratev1.AcquireLeaseRequest{CoordinatorId: "c1", Ttl: durationpb.New(time.Minute)})
	if err != nil || again.LeaseId != l.LeaseId || again.Ttl.AsDuration() != time.Minute {
		t.Errorf("re-acquire by the holder's certificate and coordinator_id: %v, %v (want lease %s, ttl 1m)", again, err, l.LeaseId)
	}
	_, err = c.Tune(ctx, &lineratev1.TuneRequest{})
	wantCode(t, err, codes.FailedPrecondition, "tune without lease")
	_, err = c.Tune(ctx, &lineratev1.TuneRequest{LeaseId: "nope"})
	wantCode(t, err, codes.FailedPrecondition, "tune with a wrong lease")
	_, err = c.Collect(ctx, &lineratev1.CollectRequest{LeaseId: "nope"})
	wantCode(t, err, codes.FailedPrecondition, "collect with a wrong lease")
	_, err = c.Configure(ctx, &lineratev1.ConfigureRequest{LeaseId: l.LeaseId})
	wantCode(t, err, codes.FailedPrecondition, "configure on a receiver")
	if _, err := c.RenewLease(ctx, &lineratev1.RenewLeaseRequest{LeaseId: l.LeaseId}); err != nil {
		t.Fatal(err)
	}

	tr, err := c.Tune(ctx, &lineratev1.TuneRequest{LeaseId: l.LeaseId, Irqbalance: "ignore"})
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.IrqMap) != 4 || tr.IrqMap[0].Irq != 41 || tr.IrqMap[0].Cpu != 0 || tr.IrqMap[3].Cpu != 3 {
		t.Errorf("irq map: %v", tr.IrqMap)
	}
	if len(tr.Notes) != 0 { // a CPU per queue: nothing to note (TestTuneNotesOverMTLS)
		t.Errorf("notes %q of a Tune with a CPU per queue, want none", tr.Notes)
	}
	if got := affinity(t, root, 42); got != "1\n" {
		t.Errorf("irq 42 after tune: %q, want 1", got)
	}
	if j, _ := topology.LoadJournal(state, "eth0"); j == nil {
		t.Fatal("no journal after tune")
	}
	d, err = c.Describe(ctx, &lineratev1.DescribeRequest{})
	if err != nil || d.Lease.GetCoordinatorId() != "c1" || d.Lease.GetHolder() != "coord" {
		t.Errorf("describe lease: %v %v", d.GetLease(), err)
	}
	wantMetrics(t, "tuned", scrape(t, a), map[string]float64{
		"linerate_agent_lease_held": 1, "linerate_agent_irqs_pinned": 4, "linerate_agent_tuning_journal_active": 1,
	})

	rel, err := c.ReleaseLease(ctx, &lineratev1.ReleaseLeaseRequest{LeaseId: l.LeaseId})
	if err != nil {
		t.Fatal(err)
	}
	if len(rel.Changes) == 0 {
		t.Error("release restored nothing")
	}
	if got := affinity(t, root, 42); got != "0-7\n" {
		t.Errorf("irq 42 after release: %q, want 0-7", got)
	}
	if j, _ := topology.LoadJournal(state, "eth0"); j != nil {
		t.Error("journal left after release")
	}
	wantMetrics(t, "released", scrape(t, a), idle)
	if _, err := c.ReleaseLease(ctx, &lineratev1.ReleaseLeaseRequest{LeaseId: l.LeaseId}); err != nil {
		t.Errorf("second release: %v", err)
	}
	_, err = c.Restore(ctx, &lineratev1.RestoreRequest{LeaseId: l.LeaseId})
	wantCode(t, err, codes.FailedPrecondition, "restore with a released lease")
	if _, err := c.AcquireLease(ctx, &lineratev1.AcquireLeaseRequest{CoordinatorId: "c2"}); err != nil {
		t.Errorf("acquire after release: %v", err)
	}
}

func TestLeaseExpiryRestores(t *testing.T) {
	_, c, root, state := fixtureAgent(t, 10*time.Millisecond)
	ctx := ctxT(t, 10*time.Second)
	l, err := c.AcquireLease(ctx, &lineratev1.AcquireLeaseRequest{CoordinatorId: "c1", Ttl: durationpb.New(300 * time.Millisecond)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Tune(ctx, &lineratev1.TuneRequest{LeaseId: l.LeaseId, Irqbalance: "ignore"}); err != nil {
		t.Fatal(err)
	}
	if got := affinity(t, root, 44); got != "3\n" {
		t.Fatalf("irq 44 after tune: %q", got)
	}
	poll(t, 3*time.Second, "restore after expiry", func() bool {
		j, _ := topology.LoadJournal(state, "eth0")
		return j == nil
	})
	if got := affinity(t, root, 44); got != "0-7\n" {
		t.Errorf("irq 44 after expiry: %q, want 0-7", got)
	}
	_, err = c.RenewLease(ctx, &lineratev1.RenewLeaseRequest{LeaseId: l.LeaseId})
	wantCode(t, err, codes.FailedPrecondition, "renew an expired lease")
	if _, err := c.AcquireLease(ctx, &lineratev1.AcquireLeaseRequest{CoordinatorId: "c2"}); err != nil {
		t.Errorf("another coordinator after expiry: %v", err)
	}
}

func TestRefusesNonCoordinatorPeer(t *testing.T) {
	a, _, _, _ := fixtureAgent(t, 0)
	certs := a.cfg.TLSDir
	c := dial(t, a, certs, "agent2")
	_, err := c.AcquireLease(ctxT(t, 5*time.Second), &lineratev1.AcquireLeaseRequest{CoordinatorId: "agent2"})
	if err == nil {
		t.Fatal("an agent certificate was accepted as a coordinator") // it may only Describe: peers_test.go
	}
	// A coordinator certificate from another CA gets nothing either.
	foreign := testCerts(t)
	creds, err := mtls.ClientCredentials(mtls.Options{Dir: foreign, Name: "coord", ServerName: "agent1", PeerRoles: []mtls.Role{mtls.RoleAgent}})
	if err != nil {
		t.Fatal(err)
	}
	conn, err := grpc.NewClient(a.GRPCAddr(), mtls.DialOptions(creds)...)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := lineratev1.NewAgentClient(conn).Describe(ctxT(t, 5*time.Second), &lineratev1.DescribeRequest{}); err == nil {
		t.Fatal("a coordinator of another CA was accepted")
	}
}

func TestStartRestoresCrashedJournal(t *testing.T) {
	root := t.TempDir()
	if err := fsfixture.UnpackFile(filepath.Join("..", "topology", "testdata", "apply-basic.tree"), root); err != nil {
		t.Fatal(err)
	}
	certs, state := testCerts(t), t.TempDir()
	// A first agent tunes and is abandoned without shutdown (a crash).
	first, err := New(Config{Name: "agent1", Role: RoleReceiver, Iface: "eth0", AllowMgmtIface: true, Root: root, StateDir: state, GRPCAddr: "127.0.0.1:0", TLSDir: certs, Logger: testLog(t)})
	if err != nil {
		t.Fatal(err)
	}
	first.svc.inv.inspect()
	first.svc.leases.cur = &lease{id: "x", coordinator: "c", expires: time.Now().Add(time.Minute)}
	if _, err := first.svc.Tune(ctxT(t, 5*time.Second), &lineratev1.TuneRequest{LeaseId: "x", Irqbalance: "ignore"}); err != nil {
		t.Fatal(err)
	}
	if got := affinity(t, root, 41); got != "0\n" {
		t.Fatalf("irq 41 after tune: %q", got)
	}
	startAgent(t, Config{Name: "agent1", Role: RoleReceiver, Iface: "eth0", Root: root, StateDir: state}, certs)
	if got := affinity(t, root, 41); got != "0-7\n" {
		t.Errorf("irq 41 after the restarted agent: %q, want 0-7", got)
	}
}

func TestShutdownRestoresAndDrains(t *testing.T) {
	a, c, root, state := fixtureAgent(t, 0)
	ctx := ctxT(t, 10*time.Second)
	conn, err := grpc.NewClient(a.GRPCAddr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// Plaintext gets nothing from an mTLS agent, health included.
	if _, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{}); err == nil {
		t.Error("a plaintext client reached the health service")
	}
	h := healthpb.NewHealthClient(dialConn(t, a))
	for _, svc := range []string{"", lineratev1.Agent_ServiceDesc.ServiceName} {
		r, err := h.Check(ctx, &healthpb.HealthCheckRequest{Service: svc})
		if err != nil || r.Status != healthpb.HealthCheckResponse_SERVING {
			t.Errorf("health %q: %v %v", svc, r, err)
		}
	}
	w, err := c.Watch(ctx, &lineratev1.WatchRequest{})
	if err != nil {
		t.Fatal(err)
	}
	s, err := w.Recv()
	if err != nil || s.Sender != nil || s.Receiver.GetPhase() != lineratev1.Phase_PHASE_IDLE {
		t.Errorf("first watch sample: %v %v", s, err)
	}
	l, err := c.AcquireLease(ctx, &lineratev1.AcquireLeaseRequest{CoordinatorId: "c1"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Start(ctx, &lineratev1.StartRequest{LeaseId: l.LeaseId, At: timestamppb.New(time.Now().Add(2 * time.Minute))})
	wantCode(t, err, codes.InvalidArgument, "start two minutes ahead")
	if _, err := c.Tune(ctx, &lineratev1.TuneRequest{LeaseId: l.LeaseId, Irqbalance: "ignore"}); err != nil {
		t.Fatal(err)
	}
	if err := a.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if got := affinity(t, root, 43); got != "0-7\n" {
		t.Errorf("irq 43 after shutdown: %q, want 0-7", got)
	}
	if j, _ := topology.LoadJournal(state, "eth0"); j != nil {
		t.Error("journal left after shutdown")
	}
	if r, err := http.Get("http://" + a.MetricsAddr() + "/metrics"); err == nil {
		r.Body.Close()
		t.Error("metrics still served after shutdown")
	}
	// The watch ends with the agent.
	for {
		if _, err := w.Recv(); err != nil {
			break
		}
	}
}
