//go:build linux && traffic

package e2e

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/linerate/linerate/coordinator"
)

// TestReliabilityAgentKill SIGKILLs one agent mid-run, N times, in turn
// the sender and each receiver of a 1 → 2 fan-out: every run fails
// naming the killed agent within 10 s (no hang), the other hosts are
// free and exactly as before (fixture IRQ files, XDP, pktgen), and the
// killed agent, started again, restores its own journal.
func TestReliabilityAgentKill(t *testing.T) {
	n := relN(t, 2)
	r := startRelLab(t, "ra", 1, 2)
	senders, receivers := r.hostNames()
	hosts := append(slices.Clone(senders), receivers...)
	before := r.state()
	var worst time.Duration
	named, hangs := 0, 0
	for i := range n {
		victim := hosts[i%len(hosts)]
		var once sync.Once
		var mu sync.Mutex
		var killedAt time.Time
		run := r.runner(func(p coordinator.PhaseEvent) {
			if p.Phase != coordinator.PhaseRun {
				return
			}
			once.Do(func() {
				go func() {
					time.Sleep(300 * time.Millisecond)
					mu.Lock()
					defer mu.Unlock()
					killedAt = time.Now()
					_ = r.lab.Agent(victim).Cmd.Process.Kill()
				}()
			})
		})
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		res, err := run.Run(ctx, coordinator.Spec{Senders: senders, Receivers: receivers, Pattern: coordinator.FanOut,
			Duration: time.Minute, Rate: 2000, Drain: 100 * time.Millisecond, LeaseTTL: 3 * time.Second})
		cancel()
		if err != nil {
			t.Fatalf("kill %d (%s): %v", i+1, victim, err)
		}
		mu.Lock()
		at := killedAt
		mu.Unlock()
		if at.IsZero() {
			t.Fatalf("kill %d (%s): the run never reached its run phase: %s %s", i+1, victim, res.Status, res.Error)
		}
		took := time.Since(at)
		worst = max(worst, took)
		if res.Status != coordinator.StatusFailed || !strings.Contains(res.Error, "agent "+victim) {
			t.Errorf("kill %d (%s): status %s, error %q: want failed naming agent %s", i+1, victim, res.Status, res.Error, victim)
		} else {
			named++
		}
		if took > 10*time.Second {
			hangs++
			t.Errorf("kill %d (%s): the run ended %s after the kill (a hang)", i+1, victim, took)
		}
		for _, h := range hosts {
			if h != victim && !r.free(r.client(h)) {
				t.Errorf("kill %d (%s): %s still leased after the run", i+1, victim, h)
			}
		}
		if got, want := withoutHost(r.state(), victim), withoutHost(before, victim); got != want {
			t.Errorf("kill %d (%s): the other hosts not restored:\nbefore\n%s\nafter\n%s", i+1, victim, want, got)
		}
		// The killed one comes back and restores its journal; then the
		// whole lab is as before.
		if _, err := r.lab.Restart(context.Background(), victim, r.opts); err != nil {
			t.Fatal(err)
		}
		if _, ok := waitFor(10*time.Second, func() bool { return r.state() == before }); !ok {
			t.Errorf("kill %d (%s): hosts not restored:\nbefore\n%s\nafter\n%s", i+1, victim, before, r.state())
		}
		r.waitAlive()
		r.runSucceeds(senders, receivers, coordinator.FanOut)
		t.Logf("kill %d: %s, the run failed %s after: %s", i+1, victim, took.Round(time.Millisecond), res.Error)
	}
	figure(t, "%d agents SIGKILLed mid-run (sender and receivers in turn): %d runs failed naming the killed agent, %d hangs (over 10 s), slowest failure %s after the kill, every other host free and restored", n, named, hangs, worst.Round(time.Millisecond))
}

// withoutHost is a state without host's own lines.
func withoutHost(state, host string) string {
	var keep []string
	for _, l := range strings.Split(state, "\n") {
		if !strings.HasPrefix(l, "irq "+host+":") && !strings.HasPrefix(l, "ns "+host+":") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}
