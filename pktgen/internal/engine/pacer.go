package engine

import (
	"math/bits"
	"time"
)

// CatchUp is how far behind its schedule a paced thread may fall (a
// stall: descheduled, a timer's overshoot, a syscall's setup) and still
// catch up, at full speed, so that the average rate stays exact; beyond
// it the excess is dropped.
const CatchUp = 30 * time.Millisecond

// Pacer is a token bucket with nanosecond resolution: packet k (from 0)
// is due at start + k*period, the period an exact fraction of
// nanoseconds, so the rate has no rounding drift. A sender that falls
// behind by more than Depth packets (the link could not carry the rate,
// or the thread was descheduled) loses the excess instead of bursting it.
type Pacer struct {
	num, den uint64 // period = num/den ns
	depth    uint64
	start    int64  // ns on the Control clock
	base     uint64 // packets due at start
	sent     uint64
	begun    bool
}

// NewPacer paces at one packet per num/den ns with a bucket of depth
// packets (at least 1). num 0 means no pacing.
func NewPacer(num, den, depth uint64) *Pacer {
	return &Pacer{num: num, den: max(den, 1), depth: max(depth, 1)}
}

// DepthFor is a bucket that covers window of the rate, at least min packets.
func DepthFor(num, den uint64, window time.Duration, min uint64) uint64 {
	if num == 0 {
		return min
	}
	hi, lo := bits.Mul64(uint64(window), den)
	if hi >= num {
		return 1 << 62
	}
	d, _ := bits.Div64(hi, lo, num)
	return max(d, min)
}

// Ready returns how many packets (at most limit) may go at now, or, when
// none may, how long until the next is due.
func (p *Pacer) Ready(now int64, limit uint64) (uint64, time.Duration) {
	if p.num == 0 {
		return limit, 0
	}
	if !p.begun {
		p.begun, p.start, p.base = true, now, p.sent
	}
	due := p.base + 1 + p.elapsedPackets(now)
	avail := due - p.sent
	if due < p.sent {
		avail = 0
	}
	if avail > p.depth {
		// Behind by more than the bucket: restart the schedule so that
		// exactly depth packets are due now.
		p.start, p.base = now, p.sent+p.depth-1
		avail = p.depth
	}
	if avail > 0 {
		return min(avail, limit), 0
	}
	// Packet number p.sent is due at start + (p.sent-base)*num/den, rounded up.
	k := p.sent - p.base
	hi, lo := bits.Mul64(k, p.num)
	lo, carry := bits.Add64(lo, p.den-1, 0)
	hi += carry
	if hi >= p.den {
		return 0, time.Second // beyond any real schedule
	}
	at, _ := bits.Div64(hi, lo, p.den)
	return 0, time.Duration(p.start + int64(at) - now)
}

// Took records n packets sent.
func (p *Pacer) Took(n uint64) { p.sent += n }

func (p *Pacer) elapsedPackets(now int64) uint64 {
	if now <= p.start {
		return 0
	}
	hi, lo := bits.Mul64(uint64(now-p.start), p.den)
	if hi >= p.num {
		return 1 << 62
	}
	q, _ := bits.Div64(hi, lo, p.num)
	return q
}
