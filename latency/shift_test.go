package latency

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// Taking a constant off every sample after the fact agrees with
// recording the samples less that constant: exactly in the exact range
// and for min, max and the sample count; percentiles within the bucket
// widths; samples pushed below zero become Negative; jitter unchanged.
func TestEarlierMatchesRecordingLess(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, tc := range []struct {
		name  string
		early uint64
		draw  func() int64
	}{
		{"exact range", 7, func() int64 { return 10 + rng.Int64N(50) }},
		{"wide buckets", 200, func() int64 { return 20000 + rng.Int64N(3000) }},
		{"gap at 5 kpps", 200, func() int64 { return 20200 + rng.Int64N(40) }},
		{"some below zero", 30, func() int64 { return rng.Int64N(60) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var raw, want Recorder
			var xs []int64
			for range 50000 {
				v := tc.draw()
				raw.Record(v)
				want.Record(v - int64(tc.early))
				xs = append(xs, v-int64(tc.early))
			}
			got := raw.H
			got.Earlier(tc.early)
			ws, gs := want.H.Summary(), got.Summary()
			if gs.Samples != ws.Samples || gs.Negative != ws.Negative || gs.MaxUs != ws.MaxUs {
				t.Fatalf("after Earlier(%d): %+v, recorded less: %+v", tc.early, gs, ws)
			}
			if got.Jitter16 != raw.H.Jitter16 || got.JitterN != raw.H.JitterN {
				t.Errorf("jitter changed: %d/%d, was %d/%d", got.Jitter16, got.JitterN, raw.H.Jitter16, raw.H.JitterN)
			}
			slices.Sort(xs)
			for _, q := range []float64{0.5, 0.9, 0.99} {
				g, w := got.Quantile(q), want.H.Quantile(q)
				if tol := 1 + w/16; math.Abs(g-w) > tol {
					t.Errorf("p%v: %v after Earlier, %v recorded less (±%v)", q*100, g, w, tol)
				}
			}
			if math.Abs(gs.MeanUs-ws.MeanUs) > 1+ws.MeanUs/32 {
				t.Errorf("mean %v, want %v", gs.MeanUs, ws.MeanUs)
			}
			if gs.MinUs > ws.MinUs+float64(tc.early) || (ws.Negative == 0 && gs.MinUs != ws.MinUs) {
				t.Errorf("min %v, want %v", gs.MinUs, ws.MinUs)
			}
		})
	}
}

// Nothing taken off is nothing changed; everything taken off leaves no
// sample in range and every sample counted.
func TestEarlierEdges(t *testing.T) {
	var r Recorder
	for _, v := range []int64{5, 70, 900} {
		r.Record(v)
	}
	h := r.H
	h.Earlier(0)
	if h != r.H {
		t.Fatal("Earlier(0) changed the histogram")
	}
	h.Earlier(5000)
	if s := h.Summary(); s.Samples != 3 || s.Negative != 3 || s.MaxUs != 0 || h.SumUs != 0 {
		t.Fatalf("all taken off: %+v (sum %d)", s, h.SumUs)
	}
}

// StampsEarly leaves the original alone, says what it took off in the
// JSON, and Merge averages the correction over the samples.
func TestStampsEarly(t *testing.T) {
	var r Recorder
	for range 100 {
		r.Record(1200)
	}
	l := &Latency{Histogram: r.H, Clock: SameHost}
	c := l.StampsEarly(199.6)
	if l.StampCorrectionUs != 0 || l.MinUs != 1200 {
		t.Fatalf("original changed: %+v", l.Summary())
	}
	if c.StampCorrectionUs != 200 || c.MinUs != 1000 || c.Summary().P50Us != 1000 {
		t.Fatalf("corrected: %v µs off, %+v", c.StampCorrectionUs, c.Summary())
	}
	if l.StampsEarly(0.4) != l {
		t.Error("a correction under half a µs made a copy")
	}
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	var back Latency
	if err := json.Unmarshal(b, &back); err != nil || back.StampCorrectionUs != 200 {
		t.Fatalf("JSON %s: back %v (%v)", b, back.StampCorrectionUs, err)
	}
	if b, _ := json.Marshal(l); strings.Contains(string(b), "stamp_correction_us") {
		t.Errorf("no correction, yet the JSON names one: %s", b)
	}
	var r2 Recorder
	for range 300 {
		r2.Record(1000)
	}
	m := Merge(c, &Latency{Histogram: r2.H, Clock: SameHost})
	if m.StampCorrectionUs != 50 {
		t.Errorf("merged correction %v, want 50 (200 over 100 samples, 0 over 300)", m.StampCorrectionUs)
	}
}
