package latency

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// Every value below AbsurdUs falls in the bucket whose range holds it,
// the buckets tile [0, AbsurdUs) without gaps, and none is wider than
// 1/32 of its lowest value.
func TestBucketsTile(t *testing.T) {
	next := uint64(0)
	for b := 0; b < Buckets; b++ {
		lo, w := BucketRange(b)
		if lo != next {
			t.Fatalf("bucket %d starts at %d, want %d", b, lo, next)
		}
		if lo >= 1<<LinearBits && w*(1<<SubBits) > lo {
			t.Fatalf("bucket %d [%d, +%d) wider than 1/32 of %d", b, lo, w, lo)
		}
		for _, v := range []uint64{lo, lo + w/2, lo + w - 1} {
			if got := Bucket(v); got != b {
				t.Fatalf("Bucket(%d) = %d, want %d", v, got, b)
			}
		}
		next = lo + w
	}
	if next != AbsurdUs {
		t.Fatalf("buckets end at %d, want %d", next, uint64(AbsurdUs))
	}
}

// Percentiles of known distributions are within 1.6 % of the true
// order statistic; min, max and mean are exact.
func TestQuantilesOfKnownDistributions(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct {
		name string
		draw func() int64
	}{
		{"uniform 1..10000", func() int64 { return 1 + rng.Int64N(10000) }},
		{"exponential mean 300", func() int64 { return int64(rng.ExpFloat64() * 300) }},
		{"constant 5000", func() int64 { return 5000 }},
		{"below 64", func() int64 { return rng.Int64N(64) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r Recorder
			var xs []int64
			var sum int64
			for range 200000 {
				v := tc.draw()
				xs = append(xs, v)
				sum += v
				r.Record(v)
			}
			slices.Sort(xs)
			s := r.H.Summary()
			if s.Samples != uint64(len(xs)) {
				t.Fatalf("samples %d, want %d", s.Samples, len(xs))
			}
			if s.MinUs != float64(xs[0]) || s.MaxUs != float64(xs[len(xs)-1]) {
				t.Errorf("min %v max %v, want %d %d", s.MinUs, s.MaxUs, xs[0], xs[len(xs)-1])
			}
			if want := float64(sum) / float64(len(xs)); math.Abs(s.MeanUs-want) > 1e-9*want {
				t.Errorf("mean %v, want %v", s.MeanUs, want)
			}
			for _, q := range []struct {
				q   float64
				got float64
			}{{0.5, s.P50Us}, {0.9, s.P90Us}, {0.99, s.P99Us}, {0.999, s.P999Us}} {
				want := float64(xs[int(math.Ceil(q.q*float64(len(xs))))-1])
				if math.Abs(q.got-want) > 0.016*want+0.5 {
					t.Errorf("p%v = %v, want %v within 1.6 %%", q.q*100, q.got, want)
				}
			}
			if s.PDVP99Us != s.P99Us-s.MinUs {
				t.Errorf("pdv p99 %v, want p99 - min = %v", s.PDVP99Us, s.P99Us-s.MinUs)
			}
		})
	}
}

// Jitter follows RFC 3550 A.8, checked against the formula in floating
// point: delays alternating 100 and 300 µs converge to J = 200.
func TestJitterRFC3550(t *testing.T) {
	var r Recorder
	j := 0.0
	prev := int64(0)
	for i := range 1000 {
		v := int64(100)
		if i%2 == 1 {
			v = 300
		}
		if i > 0 {
			d := math.Abs(float64(v - prev))
			j += (d - j) / 16
		}
		prev = v
		r.Record(v)
	}
	got := r.H.Summary().JitterUs
	if math.Abs(got-j) > 0.5 || math.Abs(got-200) > 1 {
		t.Errorf("jitter %v, want %v (RFC 3550 in floating point) ≈ 200", got, j)
	}
	if r.H.JitterN != 999 {
		t.Errorf("jitter differences %d, want 999", r.H.JitterN)
	}
}

// Negative and absurd delays are counted apart, and every sample is
// counted once.
func TestOutOfRange(t *testing.T) {
	var r Recorder
	for _, v := range []int64{-5, -1, 0, 10, AbsurdUs - 1, AbsurdUs, 1 << 40} {
		r.Record(v)
	}
	s := r.H.Summary()
	if s.Samples != 7 || s.Negative != 2 || s.Absurd != 2 {
		t.Errorf("summary %+v: want 7 samples, 2 negative, 2 absurd", s)
	}
	if s.MinUs != 0 || s.MaxUs != AbsurdUs-1 {
		t.Errorf("min %v max %v, want 0 and %d", s.MinUs, s.MaxUs, AbsurdUs-1)
	}
}

// Merging two recorders' histograms gives what one recorder of every
// sample gives (but jitter, which is per sequence of arrivals: the
// weighted mean).
func TestAdd(t *testing.T) {
	var a, b, all Recorder
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range 10000 {
		v := rng.Int64N(100000) - 10
		if i%3 == 0 {
			a.Record(v)
		} else {
			b.Record(v)
		}
		all.Record(v)
	}
	var m Histogram
	m.Add(&a.H)
	m.Add(&b.H)
	if m.Counts != all.H.Counts || m.MinUs != all.H.MinUs || m.MaxUs != all.H.MaxUs || m.SumUs != all.H.SumUs || m.Negative != all.H.Negative {
		t.Errorf("merged %+v, want %+v", m.Summary(), all.H.Summary())
	}
	want := (float64(a.H.Jitter16)*float64(a.H.JitterN) + float64(b.H.Jitter16)*float64(b.H.JitterN)) / float64(a.H.JitterN+b.H.JitterN)
	if m.JitterN != a.H.JitterN+b.H.JitterN || math.Abs(float64(m.Jitter16)-want) > 1 {
		t.Errorf("merged jitter %d over %d, want %v over %d", m.Jitter16, m.JitterN, want, a.H.JitterN+b.H.JitterN)
	}
	var empty Histogram
	m2 := a.H
	m2.Add(&empty)
	if m2 != a.H {
		t.Error("adding an empty histogram changed it")
	}
	empty.Add(&a.H)
	if empty != a.H {
		t.Error("adding into an empty histogram is not a copy")
	}
}

// A Latency's JSON carries the summary and the histogram, and reads
// back to the same histogram.
func TestJSONRoundTrip(t *testing.T) {
	var r Recorder
	for i := range 5000 {
		r.Record(int64(i*37%20000) - 3)
	}
	l := Latency{Histogram: r.H, Clock: Estimated, ClockErrorUs: 12.5}
	b, err := json.Marshal(l)
	if err != nil {
		t.Fatal(err)
	}
	var back Latency
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back != l {
		t.Errorf("round trip: %s", b)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"samples", "min_us", "p50_us", "p90_us", "p99_us", "p999_us", "max_us", "mean_us", "jitter_us", "pdv_p99_us", "clock", "clock_error_us"} {
		if _, ok := m[k]; !ok {
			t.Errorf("no %q in %s", k, b)
		}
	}
	if err := json.Unmarshal([]byte(`{"buckets":[[16777216,1]]}`), &back); err == nil {
		t.Error("a bucket past the top was accepted")
	}
}

// Merging delays keeps every sample and states the least certain clock
// with the largest error.
func TestMerge(t *testing.T) {
	var a, b Recorder
	a.Record(10)
	b.Record(20)
	b.Record(30)
	m := Merge(&Latency{Histogram: a.H, Clock: SameHost}, nil, &Latency{Histogram: b.H, Clock: Estimated, ClockErrorUs: 40}, &Latency{Clock: Synchronised, ClockErrorUs: 12})
	if m.Samples() != 3 || m.MinUs != 10 || m.MaxUs != 30 || m.Clock != Estimated || m.ClockErrorUs != 40 {
		t.Errorf("merged %+v", m)
	}
	if Merge(nil, nil) != nil {
		t.Error("merging nothing is not nil")
	}
}
