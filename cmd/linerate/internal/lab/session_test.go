//go:build linux && traffic

package lab

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/linerate/linerate/cmd/linerate/internal/e2e"
	"github.com/linerate/linerate/coordinator"
	"github.com/linerate/linerate/internal/netns/nstest"
)

// TestSessionMeasure: Open builds a lossy lab whose agents are alive in
// the cluster it joined; Measure adds the switch's own counts of the
// run, which match the run's books; Open refuses a lab that exists;
// Close leaves nothing.
func TestSessionMeasure(t *testing.T) {
	nstest.SkipUnlessRoot(t)
	bin := e2e.Binary(t)
	name := fmt.Sprintf("ss%d", os.Getpid()%10000)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, err := Open(ctx, Options{Spec: Spec{Name: name, Senders: 1, Receivers: 1, Loss: Loss{Every: 100}}, Agents: AgentOptions{Binary: bin, LogLevel: "warn"}})
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	defer func() {
		if !closed {
			_ = s.Close()
		}
	}()
	if n := len(s.Cluster.Members()); n < 2 || s.Agents == nil || len(s.Agents.Join) != 2 {
		t.Fatalf("members %d, agents %+v", n, s.Agents)
	}
	// Each agent was configured by its file alone: its command line is
	// only --config (and the members above and the runs below are
	// theirs).
	for _, a := range s.Lab.Agents() {
		if want := []string{"agent", "--config", filepath.Join(s.Agents.Dir, a.Host.Name, "agent.yaml")}; !slices.Equal(a.args, want) {
			t.Errorf("agent %s started as %q, want %q", a.Host.Name, a.args, want)
		}
	}

	_, err = Open(ctx, Options{Spec: Spec{Name: name, Senders: 1, Receivers: 1}, Agents: AgentOptions{Binary: bin}})
	var exists *ExistsError
	if !errors.As(err, &exists) || exists.Name != name {
		t.Errorf("a second Open of lab %s: %v, want an ExistsError", name, err)
	}

	r := s.Runner()
	res, err := s.Measure(func() (*coordinator.Result, error) {
		return r.Run(ctx, coordinator.Spec{Senders: []string{"s1"}, Receivers: []string{"r1"}, Count: 5000, Backend: "afpacket", Drain: 200 * time.Millisecond})
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != coordinator.StatusOK || len(res.Flows) != 1 || res.Lab == nil {
		t.Fatalf("status %s (%s), %d flows, lab %v", res.Status, res.Error, len(res.Flows), res.Lab)
	}
	f := res.Flows[0]
	if f.Sent != 5000 || f.Lost != 50 || res.Lab.Drops() != f.Lost {
		t.Errorf("sent %d lost %d, the switch dropped %d: want 5000, 50, 50", f.Sent, f.Lost, res.Lab.Drops())
	}
	var s1 *coordinator.PortTruth
	for i, p := range res.Lab.SwitchPorts {
		if p.Name == "s1" {
			s1 = &res.Lab.SwitchPorts[i]
		}
	}
	if s1 == nil || s1.TestPackets != 5000 || s1.ProgDrops != 50 || s1.Loss != (Loss{Every: 100}).String() {
		t.Errorf("switch port s1: %+v", s1)
	}
	// Measure counts only its run: a second run starts from zero.
	res, err = s.Measure(func() (*coordinator.Result, error) {
		return r.Run(ctx, coordinator.Spec{Senders: []string{"s1"}, Receivers: []string{"r1"}, Count: 1000, Backend: "afpacket", Drain: 200 * time.Millisecond})
	})
	if err != nil || res.Lab == nil || res.Lab.Drops() != 10 {
		t.Errorf("second run: %v, lab %+v; want 10 drops", err, res.Lab)
	}

	dir := s.Agents.Dir
	closed = true
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for _, r := range Remains(name, dir) {
		t.Errorf("%s left behind", r)
	}
}
