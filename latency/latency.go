package latency

import (
	"encoding/json"
	"fmt"
	"slices"
)

// Latency is the delays of a stream or a flow with the clock they were
// measured on: what a report's "latency" holds. Its JSON is the Summary,
// the clock, and the histogram itself (so that a stored result can be
// merged and drawn again): "buckets" as [lowest µs, count] pairs of the
// buckets that are not empty, "sum_us" and "jitter_diffs".
type Latency struct {
	Histogram
	Clock Clock
	// ClockErrorUs bounds how far every delay may be off because of the
	// clocks: 0 on one host, the offset measurement's bound when
	// estimated.
	ClockErrorUs float64
	// StampCorrectionUs is how much earlier than its frame left the
	// sender's stamp was written, on average, and so was taken off every
	// delay (Histogram.Earlier): kernel pktgen's pacing wait per frame,
	// which it measures itself. 0: none known (the userspace backends
	// stamp as they send).
	StampCorrectionUs float64
}

// latencyJSON is Latency on the wire.
type latencyJSON struct {
	Summary
	Clock        Clock       `json:"clock"`
	ClockErrorUs float64     `json:"clock_error_us"`
	StampCorrUs  float64     `json:"stamp_correction_us,omitempty"`
	SumUs        uint64      `json:"sum_us"`
	JitterDiffs  uint64      `json:"jitter_diffs"`
	Jitter16     uint64      `json:"jitter16"`
	Buckets      [][2]uint64 `json:"buckets"`
}

// MarshalJSON writes the summary, the clock and the histogram.
func (l Latency) MarshalJSON() ([]byte, error) {
	j := latencyJSON{Summary: l.Summary(), Clock: l.Clock, ClockErrorUs: l.ClockErrorUs, StampCorrUs: l.StampCorrectionUs,
		SumUs: l.SumUs, JitterDiffs: l.JitterN, Jitter16: l.Jitter16, Buckets: [][2]uint64{}}
	for b, c := range l.Counts {
		if c != 0 {
			lo, _ := BucketRange(b)
			j.Buckets = append(j.Buckets, [2]uint64{lo, c})
		}
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads what MarshalJSON wrote: the histogram from its
// buckets, minimum, maximum, sum and jitter; the percentiles are derived
// again, never read.
func (l *Latency) UnmarshalJSON(b []byte) error {
	var j latencyJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	var h Histogram
	for _, bc := range j.Buckets {
		if bc[0] >= AbsurdUs {
			return fmt.Errorf("latency bucket at %d µs: past the histogram's top (%d µs)", bc[0], uint64(AbsurdUs))
		}
		h.Counts[Bucket(bc[0])] += bc[1]
	}
	h.Negative, h.Absurd = j.Negative, j.Absurd
	h.MinUs, h.MaxUs, h.SumUs = uint64(j.MinUs), uint64(j.MaxUs), j.SumUs
	h.Jitter16, h.JitterN = j.Jitter16, j.JitterDiffs
	*l = Latency{Histogram: h, Clock: j.Clock, ClockErrorUs: j.ClockErrorUs, StampCorrectionUs: j.StampCorrUs}
	return nil
}

// Merge returns the delays of ls together (nil ones skipped; nil when
// all are): the histograms merged, on the least certain of their clocks
// (Clocks' order) with the largest error, their stamp corrections
// averaged over their samples.
func Merge(ls ...*Latency) *Latency {
	var out *Latency
	for _, l := range ls {
		if l == nil {
			continue
		}
		if out == nil {
			out = &Latency{Clock: l.Clock}
		}
		out.addStamp(l)
		out.Histogram.Add(&l.Histogram)
		if slices.Index(Clocks, l.Clock) > slices.Index(Clocks, out.Clock) {
			out.Clock = l.Clock
		}
		out.ClockErrorUs = max(out.ClockErrorUs, l.ClockErrorUs)
	}
	return out
}

// addStamp averages o's stamp correction into l's, weighted by their
// samples, before o's histogram is added to l's.
func (l *Latency) addStamp(o *Latency) {
	n, m := float64(l.Samples()), float64(o.Samples())
	if n+m > 0 {
		l.StampCorrectionUs = (l.StampCorrectionUs*n + o.StampCorrectionUs*m) / (n + m)
	}
}
