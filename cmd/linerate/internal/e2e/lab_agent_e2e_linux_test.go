//go:build linux && traffic

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/linerate/linerate/cmd/linerate/internal/lab"
	"github.com/linerate/linerate/coordinator"
	"github.com/linerate/linerate/internal/cluster/gossip"
	"github.com/linerate/linerate/internal/cluster/mtls"
	"github.com/linerate/linerate/internal/fsfixture"
	"github.com/linerate/linerate/internal/netns/nstest"
	"github.com/linerate/linerate/topology"
)

// virtioData0 unpacks a fixture host whose data0 is a 4-queue virtio NIC
// on node 1, so that an agent given --root tunes (and journals) IRQ
// affinities there while its traffic uses the lab's real data0.
func virtioData0(t *testing.T) (dir string, snapshot func() string) {
	t.Helper()
	raw, err := os.ReadFile("../../../../topology/testdata/virtio-mq.tree")
	if err != nil {
		t.Fatal(err)
	}
	a, err := fsfixture.Parse([]byte(strings.ReplaceAll(string(raw), "eth0", "data0")))
	if err != nil {
		t.Fatal(err)
	}
	dir = t.TempDir()
	if err := a.Unpack(dir); err != nil {
		t.Fatal(err)
	}
	return dir, func() string {
		var b strings.Builder
		files, _ := filepath.Glob(filepath.Join(dir, "proc/irq/*/smp_affinity*"))
		for _, f := range files {
			v, _ := os.ReadFile(f)
			fmt.Fprintf(&b, "%s=%s", strings.TrimPrefix(f, dir), v)
		}
		return b.String()
	}
}

// TestLabAgentKilled checks that an agent SIGKILLed mid-run fails the run
// within 10 s naming it; that the other hosts are released and restored;
// and that the killed host's journal is restored when its agent starts
// again. Also that a client without a valid certificate, and a gossip
// member with the wrong key, get nothing.
func TestLabAgentKilled(t *testing.T) {
	nstest.SkipUnlessRoot(t)
	bin := Binary(t)
	name := fmt.Sprintf("k%d", os.Getpid()%10000)
	l, err := lab.Up(lab.Spec{Name: name, Senders: 2, Receivers: 2, Mgmt: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "lab") // the agents' directory, not DefaultDir
	defer func() {
		if err := l.Down(); err != nil {
			t.Error(err)
		}
		assertNoLab(t, name, dir)
	}()
	r1Root, r1Now := virtioData0(t)
	r2Root, r2Now := virtioData0(t)
	r1Before, r2Before := r1Now(), r2Now()
	opts := lab.AgentOptions{Binary: bin, Dir: dir, LogLevel: "debug",
		HostArgs: map[string][]string{"r1": {"--root", r1Root}, "r2": {"--root", r2Root}}}
	c, err := l.StartAgents(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	key, err := gossip.ReadKey(c.GossipKey)
	if err != nil {
		t.Fatal(err)
	}
	log := hclog.New(&hclog.LoggerOptions{Name: "coordinator", Level: hclog.Warn, Output: testWriter{t}})
	cl, err := coordinator.JoinCluster(context.Background(), coordinator.ClusterConfig{Bind: c.Bind, Join: c.Join[:1], GossipKey: key, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if _, err := cl.WaitAlive(context.Background(), 4, 15*time.Second); err != nil {
		t.Fatal(err)
	}

	t.Run("refusals", func(t *testing.T) {
		// A coordinator certificate from another CA: the health check
		// (and every call) is refused.
		other := t.TempDir()
		if _, _, err := mtls.Init(other, mtls.CAOptions{}, false); err != nil {
			t.Fatal(err)
		}
		if _, _, err := mtls.Issue(other, mtls.LeafOptions{Name: lab.CoordinatorCert, Role: mtls.RoleCoordinator}, false); err != nil {
			t.Fatal(err)
		}
		// As on a real host, no CA key beside the served certificates.
		if err := os.Remove(filepath.Join(other, mtls.CAKeyFile)); err != nil {
			t.Fatal(err)
		}
		for _, m := range coordinator.Check(context.Background(), cl.Members(), coordinator.TLSDialer(mtls.Options{Dir: other, Name: lab.CoordinatorCert}), 3*time.Second) {
			if m.Health == "serving" {
				t.Errorf("%s served a coordinator from another CA", m.Name)
			}
		}
		for _, m := range coordinator.Check(context.Background(), cl.Members(), coordinator.TLSDialer(mtls.Options{Dir: c.TLSDir, Name: lab.CoordinatorCert}), 3*time.Second) {
			if m.Health != "serving" {
				t.Errorf("%s: %s with the lab's certificate", m.Name, m.Health)
			}
		}
		wrong := make([]byte, 32)
		if _, err := coordinator.JoinCluster(context.Background(), coordinator.ClusterConfig{Bind: c.Bind, Join: c.Join[:1], GossipKey: wrong, JoinTimeout: time.Second, Logger: log}); err == nil {
			t.Error("a member with the wrong gossip key joined")
		}
		if _, err := coordinator.JoinCluster(context.Background(), coordinator.ClusterConfig{Bind: c.Bind, Join: c.Join[:1], InsecureGossip: true, JoinTimeout: time.Second, Logger: log}); err == nil {
			t.Error("a member without the gossip key joined")
		}
	})

	var mu sync.Mutex
	var killedAt time.Time
	var once sync.Once
	killed := make(chan struct{})
	kill := func() {
		time.Sleep(500 * time.Millisecond)
		mu.Lock()
		killedAt = time.Now()
		mu.Unlock()
		_ = l.Agent("r2").Cmd.Process.Signal(syscall.SIGKILL)
		close(killed)
	}
	r := &coordinator.Runner{Cluster: cl, Dial: coordinator.TLSDialer(mtls.Options{Dir: c.TLSDir, Name: lab.CoordinatorCert}), Log: log,
		OnPhase: func(p coordinator.PhaseEvent) {
			if p.Phase != coordinator.PhaseRun {
				return
			}
			once.Do(func() { go kill() })
		}}
	res, err := r.Run(context.Background(), coordinator.Spec{
		Senders: []string{"s1", "s2"}, Receivers: []string{"r1", "r2"}, Duration: time.Minute, Rate: 5000, Drain: 100 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	<-killed
	mu.Lock()
	took := time.Since(killedAt)
	mu.Unlock()
	if res.Status != coordinator.StatusFailed || !strings.Contains(res.Error, "agent r2") || res.FailedPhase != coordinator.PhaseRun {
		t.Fatalf("status %s, phase %s, error %q", res.Status, res.FailedPhase, res.Error)
	}
	if took > 10*time.Second {
		t.Errorf("the run ended %s after the kill", took)
	}
	t.Logf("failed %s after the kill: %s", took.Round(time.Millisecond), res.Error)
	for _, h := range res.Hosts {
		switch h.Name {
		case "r1":
			if h.Tuned != "restored" || len(h.IRQMap) != 8 { // 4 queues, rx and tx vectors
				t.Errorf("r1: tuning %q, irq map %v", h.Tuned, h.IRQMap)
			}
		case "r2":
			if !strings.Contains(strings.Join(h.Warnings, "\n"), "release lease") {
				t.Errorf("r2's release should have failed: %v", h.Warnings)
			}
		}
	}
	if r1Now() != r1Before {
		t.Errorf("r1 not restored:\nbefore %s\nafter  %s", r1Before, r1Now())
	}
	if r2Now() == r2Before {
		t.Error("r2 was never tuned (the kill proves nothing)")
	}
	// The other agents are free again: a new run leases them.
	for _, m := range []string{"s1", "s2", "r1"} {
		if l.Agent(m).Exited() {
			t.Errorf("agent %s exited", m)
		}
	}
	if _, err := l.Restart(context.Background(), "r2", opts); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for r2Now() != r2Before && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if r2Now() != r2Before {
		t.Errorf("r2's journal not restored when its agent restarted:\nbefore %s\nafter  %s", r2Before, r2Now())
	}
	if _, err := cl.WaitAlive(context.Background(), 4, 15*time.Second); err != nil {
		t.Fatal(err)
	}
	res, err = r.Run(context.Background(), coordinator.Spec{Senders: []string{"s1", "s2"}, Receivers: []string{"r1", "r2"}, Count: 2000, Drain: 100 * time.Millisecond})
	if err != nil || res.Status != coordinator.StatusOK {
		t.Fatalf("run after the restart: %v %s %s", err, res.Status, res.Error)
	}
	for _, f := range res.Flows {
		if f.Sent != 2000 || f.Received != 2000 {
			t.Errorf("after the restart: flow %s→%s sent %d received %d", f.Sender, f.Receiver, f.Sent, f.Received)
		}
	}
	checkIRQVerify(t, res)
}

// checkIRQVerify checks the lab run's irq_verify: the receivers, tuned on
// their fixture roots, verified their 8 queue IRQs against the journal
// (the fixture's counters do not move: nothing fired, nothing off its
// CPU); the senders' veths have none, with the reason their tuning was
// skipped for.
func checkIRQVerify(t *testing.T, res *coordinator.Result) {
	t.Helper()
	for _, h := range res.Hosts {
		v := h.IRQVerify
		switch h.Role {
		case "receiver":
			if v == nil || len(v.IRQs) != 8 || v.OffCPU != 0 || v.Iface != "data0" {
				t.Errorf("%s: irq_verify %+v (reason %q), want data0's 8 queue IRQs, none off its CPU", h.Name, v, h.IRQVerifyReason)
				continue
			}
			for _, q := range v.IRQs {
				if q.Source != "journal" || q.Total != 0 {
					t.Errorf("%s irq %d: planned %s from %s, %d fired; want the journal's CPU, none", h.Name, q.IRQ, q.Planned, q.Source, q.Total)
				}
			}
		case "sender":
			if v != nil || h.IRQVerifyReason != topology.NoQueueIRQs {
				t.Errorf("%s: irq_verify %+v, reason %q; want none: %q", h.Name, v, h.IRQVerifyReason, topology.NoQueueIRQs)
			}
		}
	}
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}
