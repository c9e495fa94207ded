package pktgen

import "testing"

// The slowest thread: its count at its rate, as asked (ceiling 0: an
// unpaced thread has no length) or at most a ceiling (an unpaced thread
// taken at it); the burst counted in a delay's rate; per-thread counts
// and rates without CPUs (a request before its defaults) counted too.
func TestSlowestThread(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		cfg        Config
		ceiling    float64
		want       Slowest
		ok         bool
	}{
		{"no count", "", Config{CPUs: []int{0}, RatePPS: 10}, 0, Slowest{}, false},
		{"unpaced, no ceiling", "", Config{CPUs: []int{0}, Count: 10}, 0, Slowest{}, false},
		{"unpaced, at the ceiling", "count 5000 at unpaced, taken as 1000 pps", Config{CPUs: []int{0}, Count: 5000}, FloorPPS, Slowest{Count: 5000, PPS: FloorPPS, Secs: 5}, true},
		{"as asked", "count 10000000000 at 1 pps", Config{CPUs: []int{0}, Count: 1e10, RatePPS: 1}, 0, Slowest{Count: 1e10, Asked: 1, PPS: 1, Secs: 1e10}, true},
		{"above the ceiling", "count 3000 at 1000000 pps, taken as 1000 pps", Config{CPUs: []int{0}, Count: 3000, RatePPS: 1e6}, FloorPPS, Slowest{Count: 3000, Asked: 1e6, PPS: FloorPPS, Secs: 3}, true},
		{"a delay of bursts", "count 1000000 at 100 pps", Config{CPUs: []int{0}, Count: 1e6, DelayNS: 1e9, Burst: 100}, 0, Slowest{Count: 1e6, Asked: 100, PPS: 100, Secs: 1e4}, true},
		{"per-thread, no CPUs", "count 1000000 at 10 pps", Config{Counts: []uint64{10, 1e6}, Rates: []uint64{1, 10}}, 0, Slowest{Thread: 1, Count: 1e6, Asked: 10, PPS: 10, Secs: 1e5}, true},
		{"the first of equals", "count 100 at 10 pps", Config{CPUs: []int{0, 1}, Count: 100, RatePPS: 10}, 0, Slowest{Count: 100, Asked: 10, PPS: 10, Secs: 10}, true},
		{"a fraction", "count 10 at 3.33 pps", Config{CPUs: []int{0}, Count: 10, DelayNS: 3e8}, 0, Slowest{Count: 10, Asked: 1e9 / 3e8, PPS: 1e9 / 3e8, Secs: 3}, true},
	} {
		got, ok := tc.cfg.SlowestThread(tc.ceiling)
		if ok != tc.ok || got != tc.want {
			t.Errorf("%s: %+v %v, want %+v %v", tc.name, got, ok, tc.want, tc.ok)
		}
		if ok && got.String() != tc.text {
			t.Errorf("%s: %q, want %q", tc.name, got.String(), tc.text)
		}
	}
}
