package coordinator

import (
	"context"
	"fmt"
	"time"

	lineratev1 "github.com/linerate/linerate/proto/linerate/v1"
)

// offsetExchanges is how many Clock calls one offset measurement makes:
// the one with the lowest round trip is kept (NTP's and chrony's
// choice: queueing only ever adds delay, so the fastest exchange is the
// least skewed).
const offsetExchanges = 16

// Offset is an agent's realtime clock against the coordinator's,
// measured over the control connection.
type Offset struct {
	// Offset is the agent's clock less the coordinator's.
	Offset time.Duration
	// RTT is the lowest round trip, less the agent's own time in the
	// call: the offset is within RTT/2 of the truth.
	RTT     time.Duration
	Samples int
	BootID  string
	// At is when it was measured, on the coordinator's clock.
	At time.Time
}

// Bound is how far Offset may be from the truth: half the round trip.
func (o Offset) Bound() time.Duration { return o.RTT / 2 }

// Known is the offset when it is known to be one: larger than its bound
// (0 for a nil Offset, or one within its bound, as between processes on
// one host: applying it would only add its error).
func (o *Offset) Known() time.Duration {
	if o == nil || o.Offset.Abs() <= o.Bound() {
		return 0
	}
	return o.Offset
}

// MeasureOffset asks c's agent offsetExchanges times what its clock
// says, timing each call on now (the coordinator's clock), and keeps the
// exchange with the lowest round trip: offset = ((t2 - t1) + (t3 -
// t4)) / 2, round trip = (t4 - t1) - (t3 - t2).
func MeasureOffset(ctx context.Context, c lineratev1.AgentClient, now func() time.Time) (Offset, error) {
	best := Offset{RTT: -1}
	for range offsetExchanges {
		t1 := now()
		resp, err := c.Clock(ctx, &lineratev1.ClockRequest{})
		t4 := now()
		if err != nil {
			return Offset{}, fmt.Errorf("measure the clock offset: %w", err)
		}
		t2, t3 := time.Unix(0, resp.ReceivedUnixNs), time.Unix(0, resp.SentUnixNs)
		rtt := t4.Sub(t1) - t3.Sub(t2)
		if rtt < 0 {
			rtt = 0 // the agent's time in the call was longer than the call: its clock stepped
		}
		best.Samples++
		if best.RTT < 0 || rtt < best.RTT {
			best.Offset = (t2.Sub(t1) + t3.Sub(t4)) / 2
			best.RTT, best.BootID, best.At = rtt, resp.BootId, t4
		}
	}
	return best, nil
}
