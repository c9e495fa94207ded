//go:build linux && traffic

package e2e

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/linerate/linerate/coordinator"
)

// TestReliabilityPartition cuts a receiver's management link (mgmt0 down
// in its namespace) while a 1 → 1 run sends: the run fails naming the
// receiver, the sender is stopped and freed by the coordinator, the
// unreachable receiver restores itself when its lease (3 s) runs out,
// and with the link back a new run succeeds. Prints what happened and
// the times.
func TestReliabilityPartition(t *testing.T) {
	r := startRelLab(t, "rc", 1, 1)
	senders, receivers := r.hostNames()
	s, rcv := senders[0], receivers[0]
	before := r.state()
	const ttl = 3 * time.Second
	link := func(state string) {
		if out, err := r.host(rcv).NS.Command(context.Background(), "ip", "link", "set", "mgmt0", state).CombinedOutput(); err != nil {
			t.Fatalf("mgmt0 %s in %s: %v %s", state, rcv, err, out)
		}
	}
	var mu sync.Mutex
	var cut time.Time
	var once sync.Once
	restoredc := make(chan time.Duration, 1)
	run := r.runner(func(p coordinator.PhaseEvent) {
		if p.Phase == coordinator.PhaseRun {
			once.Do(func() {
				go func() {
					time.Sleep(300 * time.Millisecond)
					mu.Lock()
					defer mu.Unlock()
					link("down")
					cut = time.Now()
					go func() {
						d, _ := waitFor(time.Minute, func() bool { return r.state() == before })
						restoredc <- d
					}()
				}()
			})
		}
	})
	t.Cleanup(func() { link("up") })
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	res, err := run.Run(ctx, coordinator.Spec{Senders: senders, Receivers: receivers, Duration: time.Minute, Rate: 2000,
		Drain: 100 * time.Millisecond, LeaseTTL: ttl})
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	at := cut
	mu.Unlock()
	if at.IsZero() {
		t.Fatalf("the run ended before the partition: %s %s", res.Status, res.Error)
	}
	failed := time.Since(at)
	if res.Status != coordinator.StatusFailed || !strings.Contains(res.Error, "agent "+rcv) {
		t.Errorf("status %s, error %q: want failed naming agent %s", res.Status, res.Error, rcv)
	}
	if failed > 30*time.Second {
		t.Errorf("the run failed %s after the partition", failed)
	}
	if !r.free(r.client(s)) || r.sending(s) {
		t.Errorf("%s still leased or sending after the failed run", s)
	}
	restored := <-restoredc // from the cut
	if restored > ttl+time.Second {
		t.Errorf("%s restored %s after the cut, lease TTL %s:\n%s\nwant\n%s", rcv, restored, ttl, r.state(), before)
	}
	link("up")
	back, ok := waitFor(20*time.Second, func() bool { return r.free(r.client(rcv)) })
	if !ok {
		t.Errorf("%s not free %s after the link came back", rcv, back)
	}
	r.waitAlive()
	again := r.runSucceeds(senders, receivers, coordinator.Pairwise)
	t.Logf("the run failed %s after the cut: %s", failed.Round(time.Millisecond), res.Error)
	figure(t, "mgmt0 of %s down mid-run (lease TTL %s): the run failed %s after the cut naming %s (phase %s); the sender was stopped and freed; %s restored its IRQs by lease expiry %s after the cut; link up: free after %s, a new run succeeded within %s",
		rcv, ttl, failed.Round(time.Millisecond), rcv, res.FailedPhase, rcv, restored.Round(time.Millisecond), back.Round(time.Millisecond), again.Round(time.Millisecond))
	figure(t, "the partitioned run's error: %s", res.Error)
}
