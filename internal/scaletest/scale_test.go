//go:build traffic

package scaletest

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/linerate/linerate/agent"
	"github.com/linerate/linerate/coordinator"
	"github.com/linerate/linerate/internal/mtls"
	"github.com/linerate/linerate/pktgen"
	lineratev1 "github.com/linerate/linerate/proto/linerate/v1"
)

// nullBackend "sends" nothing: the scale test times the control plane
// (discovery, leases, the scheduled start), not traffic.
type nullBackend struct{}

func (nullBackend) Name() string { return "null" }
func (nullBackend) Run(ctx context.Context, cfg pktgen.Config, _ func(pktgen.Progress)) (*pktgen.Summary, error) {
	return &pktgen.Summary{Backend: "null", Device: cfg.Device}, nil
}

// TestScale starts 256 real agents on loopback (serf + mutual-TLS
// gRPC, each its own certificate), lets a coordinator discover them as
// they join, checks every one's health, then schedules one start over 64
// of them as senders and reports the skew. Figures are logged (and kept
// in docs/benchmarks.md); the assertions are about correctness: every
// agent listed, serving, started.
func TestScale(t *testing.T) {
	if testing.Short() {
		t.Skip("starts 256 agents")
	}
	// make test runs a small cluster; `make bench-scale` the full one
	// (LINERATE_SCALE_AGENTS=256, 64 senders, no race detector).
	agents, senders := 32, 16
	if v, err := strconv.Atoi(os.Getenv("LINERATE_SCALE_AGENTS")); err == nil && v >= 2 {
		agents, senders = v, min(64, v/2)
	}
	certs := t.TempDir()
	if _, _, err := mtls.Init(certs, mtls.CAOptions{}, false); err != nil {
		t.Fatal(err)
	}
	name := func(i int) string { return fmt.Sprintf("a%03d", i) }
	for i := range agents {
		if _, _, err := mtls.Issue(certs, mtls.LeafOptions{Name: name(i), Role: mtls.RoleAgent, Hosts: []string{"127.0.0.1"}}, false); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := mtls.Issue(certs, mtls.LeafOptions{Name: "coordinator", Role: mtls.RoleCoordinator}, false); err != nil {
		t.Fatal(err)
	}
	quiet := hclog.New(&hclog.LoggerOptions{Level: hclog.Off})
	start := func(i int, join []string) (*agent.Agent, error) {
		cfg := agent.Config{
			Name: name(i), Role: agent.RoleReceiver, Iface: "lo", Bind: "127.0.0.1:0", GRPCAddr: "127.0.0.1:0", Join: join,
			TLSDir: certs, StateDir: t.TempDir(), Version: "scale", Logger: quiet,
		}
		if i < senders {
			cfg.Role, cfg.Backend, cfg.AllowMgmtIface = agent.RoleSender, nullBackend{}, true
			cfg.AllowDst = []netip.Prefix{netip.MustParsePrefix("198.18.0.0/15")}
		}
		a, err := agent.New(cfg)
		if err != nil {
			return nil, err
		}
		if err := a.Start(context.Background()); err != nil {
			return nil, err
		}
		return a, nil
	}
	all := make([]*agent.Agent, agents)
	t.Cleanup(func() {
		var wg sync.WaitGroup
		for _, a := range all {
			if a != nil {
				wg.Add(1)
				go func() {
					defer wg.Done()
					ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
					defer cancel()
					_ = a.Shutdown(ctx)
				}()
			}
		}
		wg.Wait()
	})
	seed, err := start(0, nil)
	if err != nil {
		t.Fatal(err)
	}
	all[0] = seed
	cl, err := coordinator.JoinCluster(coordinator.ClusterConfig{Bind: "127.0.0.1:0", Join: []string{seed.GossipAddr()}, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()

	// The others join the seed, 16 at a time; the coordinator learns of
	// them by gossip.
	t0 := time.Now()
	sem := make(chan struct{}, 16)
	var wg sync.WaitGroup
	errs := make([]error, agents)
	for i := 1; i < agents; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			all[i], errs[i] = start(i, []string{seed.GossipAddr()})
		}()
	}
	wg.Wait()
	started := time.Since(t0)
	for i, err := range errs {
		if err != nil {
			t.Fatalf("agent %s: %v", name(i), err)
		}
	}
	if _, err := cl.WaitAlive(context.Background(), agents, time.Minute); err != nil {
		t.Fatal(err)
	}
	listed := time.Since(t0)
	dial := coordinator.TLSDialer(mtls.Options{Dir: certs, Name: "coordinator"})
	ms := coordinator.Check(context.Background(), cl.Members(), dial, 10*time.Second)
	ready := time.Since(t0)
	for _, m := range ms {
		if m.Health != "serving" {
			t.Errorf("%s: %s", m.Name, m.Health)
		}
	}
	t.Logf("%d agents: all started in %s, all listed alive by the coordinator after %s, all healthy (mTLS health check) after %s",
		agents, started.Round(time.Millisecond), listed.Round(time.Millisecond), ready.Round(time.Millisecond))

	// One scheduled start over the senders, through the run's own code.
	var starters []coordinator.Starter
	for i := range senders {
		m := ms[i]
		conn, err := dial(m)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		c := lineratev1.NewAgentClient(conn)
		lease, err := c.AcquireLease(context.Background(), &lineratev1.AcquireLeaseRequest{CoordinatorId: "scale", Ttl: durationpb.New(time.Minute)})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Configure(context.Background(), &lineratev1.ConfigureRequest{LeaseId: lease.LeaseId, Config: &lineratev1.SenderConfig{
			Cpus: []int32{0}, Count: 1, PktSize: 60, DstMin: "198.18.0.9", DstMac: "02:00:00:00:00:09", Backend: "null",
		}}); err != nil {
			t.Fatalf("configure %s: %v", m.Name, err)
		}
		starters = append(starters, coordinator.Starter{Name: m.Name, Client: c, Lease: lease.LeaseId})
	}
	rep, err := coordinator.StartAt(context.Background(), starters, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Started) != senders {
		t.Fatalf("%d of %d senders started", len(rep.Started), senders)
	}
	t.Logf("start over %d senders (lead %s): skew (last − first) %.0f µs; lateness after the instant p50 %.0f µs, p99 %.0f µs",
		senders, rep.Lead.Round(time.Millisecond), rep.SpreadUS, rep.P50US, rep.P99US)
}
