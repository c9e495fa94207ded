package latency

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// A distribution known by construction: 1 to 100 µs once each. Below
// 64 µs every value is its own step at k/100; above, the 2 µs buckets
// hold two values each, drawn at their middle, and the last is clamped
// to the exact maximum.
func TestCDFKnown(t *testing.T) {
	var r Recorder
	for v := int64(1); v <= 100; v++ {
		r.Record(v)
	}
	steps := r.H.CDF()
	// 63 exact steps (1..63), then 64-65, …, 98-99 (18 buckets), 100.
	if len(steps) != 63+18+1 {
		t.Fatalf("%d steps, want 82", len(steps))
	}
	for k := 1; k <= 63; k++ {
		if s := steps[k-1]; s.DelayUs != float64(k) || s.Cumulative != uint64(k) {
			t.Errorf("step %d = %+v, want %d µs at %d", k, s, k, k)
		}
	}
	if s := steps[63]; s.DelayUs != 65 || s.Cumulative != 65 {
		t.Errorf("bucket [64, 66) = %+v, want its middle 65 µs at 65 samples", s)
	}
	if s := steps[80]; s.DelayUs != 99 || s.Cumulative != 99 {
		t.Errorf("bucket [98, 100) = %+v, want 99 µs at 99 samples", s)
	}
	// 100 is alone in [100, 102), whose middle 101 lies past the maximum.
	if s := steps[81]; s.DelayUs != 100 || s.Cumulative != 100 {
		t.Errorf("last step %+v, want the exact maximum 100 µs at 100 samples", s)
	}

	// Two spikes: 90 samples at 10 µs, 10 at 1000 µs (bucket [992,
	// 1008), middle 1000): 90 % then 100 %.
	var two Recorder
	for i := range 100 {
		two.Record(map[bool]int64{true: 1000, false: 10}[i >= 90])
	}
	if got, want := two.H.CDF(), []CDFStep{{10, 90}, {1000, 100}}; !slices.Equal(got, want) {
		t.Errorf("two spikes: %+v, want %+v", got, want)
	}

	var none Histogram
	none.Negative = 3
	if got := none.CDF(); got != nil {
		t.Errorf("no sample in range: %+v, want nil", got)
	}
}

// The CDF passes through every percentile Quantile reports: the first
// step at or above rank ⌈q·n⌉ is at Quantile(q), for skewed, spread and
// tiny histograms alike; its steps rise strictly in delay and count and
// end at every sample in range.
func TestCDFMatchesQuantile(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{1, 2, 7, 100, 5000} {
		for _, draw := range []func() int64{
			func() int64 { return int64(rng.ExpFloat64() * 300) },
			func() int64 { return 20 + rng.Int64N(50000) },
			func() int64 { return 40 + rng.Int64N(30) },
		} {
			var r Recorder
			for range n {
				r.Record(draw())
			}
			r.Record(-4) // a negative sample is not in the distribution
			steps := r.H.CDF()
			if last := steps[len(steps)-1].Cumulative; last != uint64(n) {
				t.Fatalf("n %d: the CDF ends at %d samples", n, last)
			}
			for i := 1; i < len(steps); i++ {
				if steps[i].DelayUs <= steps[i-1].DelayUs || steps[i].Cumulative <= steps[i-1].Cumulative {
					t.Fatalf("n %d: steps %+v then %+v do not rise", n, steps[i-1], steps[i])
				}
			}
			for _, q := range []float64{0.001, 0.25, 0.5, 0.9, 0.99, 0.999, 1} {
				rank := max(uint64(math.Ceil(q*float64(n))), 1)
				i := slices.IndexFunc(steps, func(s CDFStep) bool { return s.Cumulative >= rank })
				if got, want := steps[i].DelayUs, r.H.Quantile(q); got != want {
					t.Errorf("n %d: the CDF reaches %v at %v µs, Quantile says %v", n, q, got, want)
				}
			}
		}
	}
}
