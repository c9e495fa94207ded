package gossip

import (
	"testing"
	"time"
)

func TestJoinBackoff(t *testing.T) {
	first, most := time.Second, 30*time.Second
	for _, c := range []struct {
		attempt int
		r       float64
		want    time.Duration
	}{
		{1, 1, time.Second}, {2, 1, 2 * time.Second}, {3, 1, 4 * time.Second}, {5, 1, 16 * time.Second},
		{6, 1, 30 * time.Second}, {40, 1, 30 * time.Second}, // capped, never overflowing
		{1, 0, 500 * time.Millisecond}, {6, 0, 15 * time.Second}, // jitter halves at most
	} {
		if got := JoinBackoff(c.attempt, first, most, c.r); got != c.want {
			t.Errorf("JoinBackoff(%d, r=%v) = %s, want %s", c.attempt, c.r, got, c.want)
		}
	}
}
