package latency

import "slices"

// LowestBetween is the lowest delay recorded between two readings of one
// histogram, before and now (now holds before's samples and those since),
// in µs; false when no sample in range came between them. It is exact
// when the interval set the histogram's minimum, and otherwise the
// lowest bucket that grew (exact below 2^LinearBits µs, its lower bound
// above: at most one bucket's width, 3.1 %, under the true lowest).
// Sampled every second it is the lowest round trip per second that the
// low-latency tuning guides judge by, without any per-packet cost.
func LowestBetween(before, now *Histogram) (uint64, bool) {
	if now.inRange() == before.inRange() {
		return 0, false
	}
	if before.inRange() == 0 || now.MinUs < before.MinUs {
		return now.MinUs, true
	}
	for b := range now.Counts {
		if now.Counts[b] > before.Counts[b] {
			lo, _ := BucketRange(b)
			return max(lo, now.MinUs), true
		}
	}
	return 0, false
}

// Lowest is a series of lowest delays, one per interval (a second), in
// µs, and its summary: the median (the lower of the middle two) and the
// least of them.
type Lowest struct {
	PerSecondUs []uint64 `json:"per_second_us"`
	MedianUs    uint64   `json:"median_us"`
	MinUs       uint64   `json:"min_us"`
}

// NewLowest summarises a series of per-second lowest delays (nil: none).
func NewLowest(perSecond []uint64) *Lowest {
	if len(perSecond) == 0 {
		return nil
	}
	s := slices.Clone(perSecond)
	slices.Sort(s)
	return &Lowest{PerSecondUs: slices.Clone(perSecond), MedianUs: s[(len(s)-1)/2], MinUs: s[0]}
}
