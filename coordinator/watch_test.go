package coordinator

import (
	"context"
	"strings"
	"testing"
	"time"
)

// A host that vanishes mid-run (its VM killed: no reset, the connection
// just goes quiet) fails the run naming it once its live counters stay
// silent for watchSilence, long before the connection's keepalive would
// notice. (Its cleanup calls get goneBudget: TestCallBudget.)
func TestRunFailsOnSilentWatch(t *testing.T) {
	s1 := sender("s1", "198.18.0.1", 100, "198.18.0.1")
	s1.watchSilent, s1.hangResult = true, true // its run never ends by itself
	r1 := receiver("r1", "198.18.0.101")
	c := newFakeCluster(t, s1, r1)
	spec := Spec{Senders: []string{"s1"}, Receivers: []string{"r1"}, Duration: time.Minute, WatchInterval: 100 * time.Millisecond}
	start := time.Now()
	res, err := (&Runner{Cluster: c, Dial: c.dial}).Run(context.Background(), spec)
	took := time.Since(start)
	if err != nil || res.Status != StatusFailed {
		t.Fatalf("%v: status %s", err, res.Status)
	}
	silence := watchSilence(spec.WatchInterval)
	if !strings.Contains(res.Error, "s1") || !strings.Contains(res.Error, "no live counters") {
		t.Errorf("error %q: want s1 named, its counters silent", res.Error)
	}
	if took < silence || took > silence+5*time.Second {
		t.Errorf("the run failed after %s, want just after the %s silence", took.Round(time.Millisecond), silence)
	}
	if !r1.released {
		t.Error("r1 not released after the run failed")
	}
}

func TestWatchSilence(t *testing.T) {
	if got := watchSilence(time.Second); got != 5*time.Second {
		t.Errorf("1s interval: %s", got)
	}
	if got := watchSilence(100 * time.Millisecond); got != 4*time.Second {
		t.Errorf("100ms interval: %s", got)
	}
}

// Cleanup calls to a host the run lost get goneBudget, others their full
// budget.
func TestCallBudget(t *testing.T) {
	n := &node{}
	if got := callBudget(n, 15*time.Second); got != 15*time.Second {
		t.Errorf("present host: %s", got)
	}
	n.gone.Store(true)
	if got := callBudget(n, 15*time.Second); got != goneBudget {
		t.Errorf("lost host: %s", got)
	}
}
