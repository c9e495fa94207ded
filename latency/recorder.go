package latency

// Recorder adds delays to a histogram in the order they arrived, which
// RFC 3550's jitter needs: one per sequence of arrivals (an AF_PACKET
// ring, a CPU of the XDP program, which does the same in BPF). The zero
// value is ready; it does not allocate.
type Recorder struct {
	H    Histogram
	n    uint64 // samples in H.Counts
	last int64
	have bool
}

// Record adds one delay of us microseconds: negative when the frame
// arrived before its send time (the clocks disagree), AbsurdUs or more
// when a clock stepped.
func (r *Recorder) Record(us int64) {
	if r.have {
		d := us - r.last
		if d < 0 {
			d = -d
		}
		r.H.Jitter16 = r.H.Jitter16 - (r.H.Jitter16+8)>>4 + uint64(min(d, AbsurdUs))
		r.H.JitterN++
	}
	r.last, r.have = us, true
	switch {
	case us < 0:
		r.H.Negative++
	case us >= AbsurdUs:
		r.H.Absurd++
	default:
		u := uint64(us)
		if r.n == 0 {
			r.H.MinUs, r.H.MaxUs = u, u
		} else {
			r.H.MinUs, r.H.MaxUs = min(r.H.MinUs, u), max(r.H.MaxUs, u)
		}
		r.n++
		r.H.SumUs += u
		r.H.Counts[Bucket(u)]++
	}
}
