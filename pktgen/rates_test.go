package pktgen

import (
	"fmt"
	"math/big"
	"slices"
	"testing"
)

// A flow's rate split over its threads sums to the flow's rate exactly,
// the remainder on the first threads, and no thread gets 0 while the
// rate covers the threads.
func TestSplitRate(t *testing.T) {
	for _, tt := range []struct {
		pps     uint64
		threads int
		want    string
	}{
		{1000, 3, "[334 333 333]"},
		{7, 2, "[4 3]"},
		{1, 1, "[1]"},
		{14_880_952, 16, "[930060 930060 930060 930060 930060 930060 930060 930060 930059 930059 930059 930059 930059 930059 930059 930059]"},
	} {
		got := SplitRate(tt.pps, tt.threads)
		var sum uint64
		for _, r := range got {
			sum += r
		}
		if fmt.Sprint(got) != tt.want || sum != tt.pps || slices.Contains(got, 0) {
			t.Errorf("SplitRate(%d, %d) = %v (sum %d), want %s", tt.pps, tt.threads, got, sum, tt.want)
		}
	}
}

// Per-thread rates pace each thread on its own: the userspace engines'
// periods are exact fractions whose rates sum to the flow's, and the
// kernel's delay is each thread's own (rounded to the ns, the burst
// counted), not the flow's rate over the thread count.
func TestPerThreadRates(t *testing.T) {
	c := baseConfig()
	c.CPUs = []int{0, 1, 2}
	c.Rates = SplitRate(1000, 3)
	sum := new(big.Rat)
	for i := range c.CPUs {
		num, den := c.Period(i)
		sum.Add(sum, new(big.Rat).SetFrac64(1e9*int64(den), int64(num))) // packets per second
		if c.RateOf(i) != c.Rates[i] {
			t.Errorf("thread %d: RateOf %d, want %d", i, c.RateOf(i), c.Rates[i])
		}
	}
	if sum.Cmp(big.NewRat(1000, 1)) != 0 {
		t.Errorf("threads paced at %v pps together, want exactly 1000", sum.FloatString(6))
	}
	for i, want := range []string{"delay 2994012", "delay 3003003", "delay 3003003"} {
		if !slices.Contains(c.Commands(i), want) {
			t.Errorf("thread %d commands %q, want %q", i, c.Commands(i), want)
		}
	}
	c.Burst = 4 // one delay per transmit call of 4 packets
	if want := "delay 11976048"; !slices.Contains(c.Commands(0), want) {
		t.Errorf("burst 4: thread 0 commands %q, want %q", c.Commands(0), want)
	}
}
