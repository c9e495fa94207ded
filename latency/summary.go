package latency

import "math"

// Summary is what a histogram says in figures, in microseconds. The
// percentiles are within half a bucket (1.6 %) of a true sample and
// never outside [MinUs, MaxUs], which are exact; the send time on the
// wire has microsecond resolution, so nothing here is finer than 1 µs.
// The figures are over the samples in range: Negative and Absurd are
// counted apart (a clock problem, not a path).
type Summary struct {
	// Samples is every sample, in range or not.
	Samples uint64  `json:"samples"`
	MinUs   float64 `json:"min_us"`
	P50Us   float64 `json:"p50_us"`
	P90Us   float64 `json:"p90_us"`
	P99Us   float64 `json:"p99_us"`
	P999Us  float64 `json:"p999_us"`
	MaxUs   float64 `json:"max_us"`
	MeanUs  float64 `json:"mean_us"`
	// JitterUs is RFC 3550's interarrival jitter (appendix A.8).
	JitterUs float64 `json:"jitter_us"`
	// PDVP99Us is RFC 5481's packet delay variation at the 99th
	// percentile: p99 less the minimum delay.
	PDVP99Us float64 `json:"pdv_p99_us"`
	Negative uint64  `json:"negative,omitempty"`
	Absurd   uint64  `json:"absurd,omitempty"`
}

// Summary returns h's figures.
func (h *Histogram) Summary() Summary {
	s := Summary{Samples: h.Samples(), Negative: h.Negative, Absurd: h.Absurd}
	n := h.inRange()
	if n == 0 {
		return s
	}
	s.MinUs, s.MaxUs = float64(h.MinUs), float64(h.MaxUs)
	s.MeanUs = float64(h.SumUs) / float64(n)
	s.P50Us = h.Quantile(0.50)
	s.P90Us = h.Quantile(0.90)
	s.P99Us = h.Quantile(0.99)
	s.P999Us = h.Quantile(0.999)
	s.PDVP99Us = s.P99Us - s.MinUs
	s.JitterUs = float64(h.Jitter16) / 16
	return s
}

// Quantile returns the delay below which a fraction q of the samples in
// range lie (the sample of rank ⌈q·n⌉), from its bucket, clamped to the
// exact minimum and maximum; 0 without samples.
func (h *Histogram) Quantile(q float64) float64 {
	n := h.inRange()
	if n == 0 {
		return 0
	}
	rank := uint64(math.Ceil(q * float64(n)))
	rank = max(rank, 1)
	var seen uint64
	for b, c := range h.Counts {
		if seen += c; seen >= rank {
			return min(max(bucketValue(b), float64(h.MinUs)), float64(h.MaxUs))
		}
	}
	return float64(h.MaxUs)
}
