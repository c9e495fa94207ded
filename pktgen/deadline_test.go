package pktgen

import (
	"strings"
	"testing"
	"time"
)

func TestDeadline(t *testing.T) {
	for _, tc := range []struct {
		name     string
		cfg      Config
		expected time.Duration
		basis    string
	}{
		{"duration", Config{CPUs: []int{0}, Duration: 8 * time.Second}, 8 * time.Second, "duration 8s"},
		{"count at a rate", Config{CPUs: []int{0, 1}, Count: 1000, RatePPS: 100}, 10 * time.Second, "count 1000 at 100 pps"},
		{"the slowest thread", Config{CPUs: []int{0, 1}, Counts: []uint64{100, 600}, Rates: []uint64{10, 200}}, 10 * time.Second, "count 100 at 10 pps"},
		{"unpaced", Config{CPUs: []int{0}, Count: 5000}, 5 * time.Second, "count 5000 at unpaced, taken as 1000 pps"},
		{"faster than the floor", Config{CPUs: []int{0}, Count: 3000, RatePPS: 1_000_000}, 3 * time.Second, "count 3000 at 1000000 pps, taken as 1000 pps"},
		{"the shorter of count and duration", Config{CPUs: []int{0}, Count: 1e9, RatePPS: 10, Duration: time.Minute}, time.Minute, "duration 1m0s"},
		{"count before duration", Config{CPUs: []int{0}, Count: 10, RatePPS: 10, Duration: time.Minute}, time.Second, "count 10 at 10 pps"},
		{"a gap in ns", Config{CPUs: []int{0}, Count: 20, DelayNS: 100_000_000}, 2 * time.Second, "count 20 at 10 pps"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := tc.cfg.Deadline(0)
			want := tc.expected + tc.expected/4 + DeadlineMargin
			if d.Expected != tc.expected || d.Limit != want || !strings.HasPrefix(d.Basis, tc.basis+", + 1/4 + 10s margin") {
				t.Errorf("deadline %+v, want expected %s, limit %s, basis %q", d, tc.expected, want, tc.basis)
			}
		})
	}
	// 10^10 packets at 1 pps is 317 years: the deadline is MaxDeadline.
	c := Config{CPUs: []int{0}, Count: 1e10, RatePPS: 1}
	if d := c.Deadline(time.Second); d.Limit != MaxDeadline || !strings.HasSuffix(d.Basis, "at most 168h0m0s") {
		t.Errorf("a run of 317 years: %+v, want the limit %s", d, MaxDeadline)
	}
	c = Config{CPUs: []int{0}, Count: 100}
	if d := c.Deadline(time.Second); d.Limit != time.Second+125*time.Millisecond {
		t.Errorf("a margin of 1s: %+v", d)
	}
}
