package latency

import "math"

// Earlier moves every sample in range us microseconds lower: what a
// send stamp written us µs before its frame left does to the delays it
// gave (kernel pktgen writes its stamp before its pacing wait). A sample
// lower than us becomes Negative. Each bucket moves as a whole, to the
// bucket of its value (its middle above the exact range), so that a
// sample lands within the bucket widths of where it belongs; MinUs and
// MaxUs move exactly, and SumUs is the sum of what stays in range.
// Jitter is of differences and does not change.
func (h *Histogram) Earlier(us uint64) {
	if us == 0 || h.inRange() == 0 {
		return
	}
	var moved [Buckets]uint64
	var sum, n uint64
	for b, c := range h.Counts {
		if c == 0 {
			continue
		}
		v := uint64(bucketValue(b))
		if v < us {
			h.Negative += c
			continue
		}
		moved[Bucket(v-us)] += c
		sum += c * (v - us)
		n += c
	}
	if n == 0 {
		h.Counts, h.SumUs, h.MinUs, h.MaxUs = moved, 0, 0, 0
		return
	}
	// The exact sum less us per sample wherever every sample stayed in
	// range; else the bucket values' sum, as exact as the buckets.
	if n == h.inRange() && h.SumUs >= n*us {
		sum = h.SumUs - n*us
	}
	minUs := uint64(0)
	if h.MinUs >= us {
		minUs = h.MinUs - us
	} else {
		for b, c := range moved {
			if c != 0 {
				minUs, _ = BucketRange(b)
				break
			}
		}
	}
	h.Counts, h.SumUs, h.MinUs, h.MaxUs = moved, sum, minUs, h.MaxUs-us
}

// StampsEarly returns l with its sender's early stamps taken off (l is
// left as it is): meanUs is how long before its frame left a stamp was
// written, on average, rounded to the stamp's microsecond. The
// histogram moves down by it (Earlier) and StampCorrectionUs says so.
// Below half a microsecond there is nothing to take off.
func (l *Latency) StampsEarly(meanUs float64) *Latency {
	early := math.Round(meanUs)
	if l == nil || early < 1 {
		return l
	}
	c := *l
	c.Histogram.Earlier(uint64(early))
	c.StampCorrectionUs += early
	return &c
}
