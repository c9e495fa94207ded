package latency

import "math/bits"

// The bucket layout, the same in Go and in the receiver's XDP program:
// values below 2^LinearBits µs have a bucket each (exact); above, each
// power of two [2^p, 2^(p+1)) is cut into 2^SubBits buckets of width
// 2^(p-SubBits), so that a bucket is at most 1/2^SubBits of its lower
// bound wide. Values of 2^TopBits µs (16.78 s) and more are absurd.
const (
	LinearBits = 6
	SubBits    = 5
	TopBits    = 24
	// Buckets is the number of buckets: 64 exact, then 32 per power of
	// two from 2^6 to 2^23.
	Buckets = 1<<LinearBits + (TopBits-LinearBits)<<SubBits
	// AbsurdUs is the first delay that is absurd: no path holds a frame
	// 16.8 s, so such a sample is a clock step or a wrong offset.
	AbsurdUs = 1 << TopBits
)

// Bucket returns the bucket of a delay of us microseconds (us <
// AbsurdUs).
func Bucket(us uint64) int {
	if us < 1<<LinearBits {
		return int(us)
	}
	p := bits.Len64(us) - 1
	return 1<<LinearBits + (p-LinearBits)<<SubBits + int(us>>(p-SubBits)&(1<<SubBits-1))
}

// BucketRange returns bucket b's lowest value and its width, in µs.
func BucketRange(b int) (lo, width uint64) {
	if b < 1<<LinearBits {
		return uint64(b), 1
	}
	b -= 1 << LinearBits
	p := b>>SubBits + LinearBits
	width = 1 << (p - SubBits)
	return 1<<p + uint64(b&(1<<SubBits-1))*width, width
}

// bucketValue is the value a percentile in bucket b reports: the value
// itself below 2^LinearBits, else the bucket's middle, so that it is
// within half a bucket (1/2^(SubBits+1) = 1.6 %) of every sample in it.
func bucketValue(b int) float64 {
	lo, w := BucketRange(b)
	if w == 1 {
		return float64(lo)
	}
	return float64(lo) + float64(w)/2
}

// Histogram is the delays of one stream (or of a flow, or a trial):
// every sample is in exactly one of Counts (by Bucket), Negative or
// Absurd, so Samples() is every sample recorded. It is a plain value:
// merge with Add, summarise with Summary.
type Histogram struct {
	Counts [Buckets]uint64
	// Negative are samples that arrived before they were sent: the clocks
	// disagree by more than the path takes.
	Negative uint64
	// Absurd are samples of AbsurdUs or more.
	Absurd uint64
	// SumUs, MinUs and MaxUs are over the samples in Counts, exact.
	SumUs, MinUs, MaxUs uint64
	// Jitter16 is RFC 3550's interarrival jitter J scaled by 16, in µs
	// (appendix A.8: J += |D| - (J+8)/16), over JitterN differences of
	// successive samples in arrival order: a sum of one such J per
	// recorder, weighted by its JitterN (see Add).
	Jitter16 uint64
	JitterN  uint64
}

// Samples returns how many samples the histogram holds.
func (h *Histogram) Samples() uint64 { return h.inRange() + h.Negative + h.Absurd }

// inRange returns how many samples Counts holds.
func (h *Histogram) inRange() uint64 {
	var n uint64
	for _, c := range h.Counts {
		n += c
	}
	return n
}

// Add merges o into h. The jitter of the merge is the mean of the two,
// weighted by how many differences each saw: jitter is a property of one
// sequence of arrivals (an RX queue's), so a stream spread over queues
// has their weighted mean.
func (h *Histogram) Add(o *Histogram) {
	if o.inRange() > 0 {
		if h.inRange() == 0 {
			h.MinUs, h.MaxUs = o.MinUs, o.MaxUs
		} else {
			h.MinUs, h.MaxUs = min(h.MinUs, o.MinUs), max(h.MaxUs, o.MaxUs)
		}
		h.SumUs += o.SumUs
		for i, c := range o.Counts {
			h.Counts[i] += c
		}
	}
	h.Negative += o.Negative
	h.Absurd += o.Absurd
	if n := h.JitterN + o.JitterN; n > 0 {
		h.Jitter16 = uint64((float64(h.Jitter16)*float64(h.JitterN) + float64(o.Jitter16)*float64(o.JitterN)) / float64(n))
		h.JitterN = n
	}
}
