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
// notice.
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
	// The vanished host is asked nothing more: it cannot answer, and
	// each call would wait out its deadline before the run could end.
	if s1.called("Stop") || s1.called("ReleaseLease") {
		t.Error("cleanup called the vanished s1")
	}
	var warned bool
	for _, h := range res.Hosts {
		for _, w := range h.Warnings {
			warned = warned || (h.Name == "s1" && strings.Contains(w, "not released: the host is gone"))
		}
	}
	if !warned {
		t.Errorf("no warning that s1 was not released: %+v", res.Hosts)
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
