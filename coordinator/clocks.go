package coordinator

import (
	"context"
	"math"
	"time"

	"github.com/linerate/linerate/latency"
)

// measureClock measures agent n's clock against the coordinator's, before
// the traffic (after: after it). An agent that cannot answer (one that
// predates the Clock call) is run without it, with a warning: its
// flows' delays stay on unrelated clocks.
func (st *runState) measureClock(after bool) func(ctx context.Context, n *node) error {
	return func(ctx context.Context, n *node) error {
		cctx, cancel := context.WithTimeout(ctx, st.r.CallTimeout)
		defer cancel()
		o, err := MeasureOffset(cctx, n.c, time.Now)
		if err != nil {
			if !after {
				n.host.Warnings = append(n.host.Warnings, "its clock could not be measured against the coordinator's: "+err.Error())
			}
			return nil
		}
		if after {
			n.clockAfter = &o
		} else {
			n.clock = &o
		}
		n.host.ClockOffset = clockOffsetOf(n.clock, n.clockAfter)
		return nil
	}
}

// clockOffsetOf is what the result says of a host's clock: the offset
// before the traffic, its bound, and the drift to the one after.
func clockOffsetOf(before, after *Offset) *ClockOffset {
	if before == nil {
		return nil
	}
	c := &ClockOffset{OffsetUS: us(before.Offset), BoundUS: us(before.Bound()), Samples: before.Samples}
	if after != nil {
		c.DriftUS = us(after.Offset - before.Offset)
	}
	return c
}

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

// latencyClock is the clock a flow's delays are on, from its two hosts'
// clocks (nil: not known): one boot id is one clock (same-host, exact);
// two clocks that their kernels say are synchronised, with the sum of
// their estimated errors; else nothing relates them.
func latencyClock(sender, receiver *Clock) (latency.Clock, float64) {
	switch {
	case sender == nil || receiver == nil:
		return latency.Unsynchronised, 0
	case sender.BootID != "" && sender.BootID == receiver.BootID:
		return latency.SameHost, 0
	case sender.Error == "" && receiver.Error == "" && sender.Synchronised && receiver.Synchronised:
		return latency.Synchronised, float64(sender.EstErrorUS + receiver.EstErrorUS)
	}
	return latency.Unsynchronised, 0
}

// pairClock is the clock the delays from sender s to receiver r are on,
// and their bound in µs: one kernel (same-host, exact); two clocks their
// kernels say are synchronised (the daemons' errors summed); two clocks
// the run measured against its own (estimated: the two halves of the
// lowest round trips, plus both drifts once known); else unrelated.
func pairClock(s, r *node) (latency.Clock, float64) {
	c, errUs := latencyClock(s.host.Clock, r.host.Clock)
	if c != latency.Unsynchronised || s.clock == nil || r.clock == nil {
		return c, errUs
	}
	bound := us(s.clock.Bound() + r.clock.Bound())
	for _, d := range []struct{ before, after *Offset }{{s.clock, s.clockAfter}, {r.clock, r.clockAfter}} {
		if d.after != nil {
			bound += math.Abs(us(d.after.Offset - d.before.Offset))
		}
	}
	return latency.Estimated, bound
}

// correction is what receiver r adds to the delays from sender s on the
// estimated clock: the sender's clock less the receiver's.
func correction(s, r *node) time.Duration { return s.clock.Offset - r.clock.Offset }
