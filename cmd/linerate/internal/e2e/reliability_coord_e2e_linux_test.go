//go:build linux && traffic

package e2e

import (
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/linerate/linerate/coordinator"
)

// TestReliabilityCoordinatorKill SIGKILLs a `linerate run` coordinator
// process mid-run, N times, over a 1 → 1 lab whose agents survive it:
// each agent's lease runs out (3 s TTL), the agents stop, disarm and
// restore by themselves within the TTL, and a new run then succeeds.
func TestReliabilityCoordinatorKill(t *testing.T) {
	n := relN(t, 2)
	r := startRelLab(t, "rb", 1, 1)
	senders, receivers := r.hostNames()
	hosts := append(slices.Clone(senders), receivers...)
	before := r.state()
	const ttl = 3 * time.Second
	var worst, worstRun time.Duration
	for i := range n {
		p := startProc(t, r.bin, append([]string{"run", "--senders", senders[0], "--receivers", receivers[0],
			"--duration", "1m", "--rate", "2000", "--lease-ttl", ttl.String(), "--json-stream", "--log-level", "warn"}, r.coordArgs()...)...)
		if !p.waitLine(`"phase":"run"`, time.Minute) {
			t.Fatalf("kill %d: the run never reached its run phase:\n%s", i+1, p.output(20))
		}
		time.Sleep(300 * time.Millisecond)
		if r.state() == before {
			t.Fatalf("kill %d: the receiver was never tuned (the kill proves nothing)", i+1)
		}
		if !r.sending(senders[0]) {
			t.Fatalf("kill %d: %s does not send (the kill proves nothing)", i+1, senders[0])
		}
		_ = p.cmd.Process.Signal(syscall.SIGKILL)
		killed := time.Now()
		p.wait(10 * time.Second)
		clients := map[string]bool{}
		took, ok := waitFor(2*ttl, func() bool {
			for _, h := range hosts {
				if !clients[h] && r.free(r.client(h)) {
					clients[h] = true
				}
			}
			return len(clients) == len(hosts) && r.state() == before
		})
		if !ok {
			t.Errorf("kill %d: after %s free %v, state\n%s\nwant\n%s", i+1, took, clients, r.state(), before)
		}
		took = time.Since(killed)
		if took > ttl+time.Second {
			t.Errorf("kill %d: the agents restored %s after the kill: the lease TTL is %s", i+1, took, ttl)
		}
		if r.sending(senders[0]) {
			t.Errorf("kill %d: %s still sends after its lease ran out", i+1, senders[0])
		}
		worst = max(worst, took)
		worstRun = max(worstRun, r.runSucceeds(senders, receivers, coordinator.Pairwise))
		t.Logf("kill %d: agents free and restored %s after the kill", i+1, took.Round(time.Millisecond))
	}
	figure(t, "%d coordinators (linerate run) SIGKILLed mid-run, lease TTL %s: every agent stopped and restored by itself at most %s after the kill; a new run then succeeded every time (first try within %s)",
		n, ttl, worst.Round(time.Millisecond), worstRun.Round(time.Millisecond))
}
