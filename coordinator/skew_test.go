package coordinator

import (
	"testing"
	"time"
)

func TestPercentile(t *testing.T) {
	v := []float64{5, 1, 4, 2, 3, 10, 9, 8, 7, 6}
	if p := percentile(v, 50); p != 5 {
		t.Errorf("p50 %v", p)
	}
	if p := percentile(v, 99); p != 10 {
		t.Errorf("p99 %v", p)
	}
	if p := percentile(nil, 50); p != 0 {
		t.Errorf("empty: %v", p)
	}
}

// Three senders 100 µs, 300 µs and 1 ms after the instant: the spread is
// last minus first, the percentiles are of the lateness.
func TestSkewOf(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	started := map[string]time.Time{
		"s1": at.Add(100 * time.Microsecond),
		"s2": at.Add(time.Millisecond),
		"s3": at.Add(300 * time.Microsecond),
	}
	spread, p50, p99 := skewOf(at, started)
	if spread != 900 || p50 != 300 || p99 != 1000 {
		t.Errorf("spread %v p50 %v p99 %v µs, want 900 300 1000", spread, p50, p99)
	}
	// A sender that started early counts as negative lateness.
	started["s0"] = at.Add(-50 * time.Microsecond)
	if spread, p50, _ := skewOf(at, started); spread != 1050 || p50 != 100 {
		t.Errorf("with an early start: spread %v p50 %v µs, want 1050 100", spread, p50)
	}
	if spread, p50, p99 := skewOf(at, nil); spread != 0 || p50 != 0 || p99 != 0 {
		t.Errorf("no starts: %v %v %v", spread, p50, p99)
	}
}

func TestStartLead(t *testing.T) {
	if got := startLead(time.Millisecond); got != 200*time.Millisecond {
		t.Errorf("fast agents: lead %s, want the 200ms floor", got)
	}
	if got := startLead(50 * time.Millisecond); got != 500*time.Millisecond {
		t.Errorf("50ms round trip: lead %s, want ten of them", got)
	}
}
