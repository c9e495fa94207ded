package latency

// CDFStep is one step of a histogram's cumulative distribution: the
// samples of one bucket, placed at one delay.
type CDFStep struct {
	// DelayUs is where the bucket's samples are drawn: the value a
	// percentile that falls in the bucket reports (Quantile): the delay
	// itself below 2^LinearBits µs, else the bucket's middle, clamped to
	// the histogram's exact minimum and maximum.
	DelayUs float64
	// Cumulative counts the samples in range at or below this step: its
	// bucket's and every lower bucket's.
	Cumulative uint64
}

// CDF returns the cumulative distribution of the samples in range, one
// step per bucket that holds any, in increasing delay (nil without
// samples); the last step's Cumulative is every sample in range. Its
// rule for where a bucket's samples sit is Quantile's, so the first
// step whose Cumulative reaches the rank ⌈q·n⌉ is at Quantile(q): a CDF
// drawn from it passes through the summary's percentiles. Negative and
// absurd samples are not in it (as in the summary).
func (h *Histogram) CDF() []CDFStep {
	var out []CDFStep
	var seen uint64
	for b, c := range h.Counts {
		if c == 0 {
			continue
		}
		seen += c
		out = append(out, CDFStep{DelayUs: min(max(bucketValue(b), float64(h.MinUs)), float64(h.MaxUs)), Cumulative: seen})
	}
	return out
}
