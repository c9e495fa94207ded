package latency

import (
	"slices"
	"testing"
)

// TestLowestBetween: the lowest delay of each interval between readings
// of one recorder: exact when it set the minimum or lies in the exact
// range, a bucket's lower bound (within its width) above; none when no
// sample came.
func TestLowestBetween(t *testing.T) {
	var r Recorder
	snap := func() Histogram { return r.H }
	h0 := snap()
	if _, ok := LowestBetween(&h0, &h0); ok {
		t.Error("no samples: a lowest delay")
	}
	for _, d := range []int64{500, 120, 900} {
		r.Record(d)
	}
	h1 := snap()
	if us, ok := LowestBetween(&h0, &h1); !ok || us != 120 {
		t.Errorf("first interval: %d %v, want 120 (exact: it set the minimum)", us, ok)
	}
	for _, d := range []int64{40, 700} {
		r.Record(d)
	}
	h2 := snap()
	if us, ok := LowestBetween(&h1, &h2); !ok || us != 40 {
		t.Errorf("second interval: %d %v, want 40", us, ok)
	}
	for _, d := range []int64{1000, 5000} {
		r.Record(d)
	}
	h3 := snap()
	us, ok := LowestBetween(&h2, &h3)
	if lo, w := BucketRange(Bucket(1000)); !ok || us != lo || us > 1000 || 1000-us >= w {
		t.Errorf("third interval: %d %v, want the bucket of 1000 µs (%d, width %d)", us, ok, lo, w)
	}
	r.Record(-3) // a negative sample is not a delay in range
	h4 := snap()
	if _, ok := LowestBetween(&h3, &h4); ok {
		t.Error("only a negative sample: a lowest delay")
	}
	l := NewLowest([]uint64{300, 120, 250, 90})
	if l.MinUs != 90 || l.MedianUs != 120 || !slices.Equal(l.PerSecondUs, []uint64{300, 120, 250, 90}) {
		t.Errorf("NewLowest: %+v", l)
	}
	if NewLowest(nil) != nil {
		t.Error("NewLowest(nil) is not nil")
	}
}
