package campaign

import (
	"math"
	"time"
)

// trialFrames is what a trial of d at rate (pps per flow) sends per flow:
// RFC 2544's trial is a specific number of frames at a specific rate
// (section 26.1), not a time. A generator that stalls for a moment (a
// virtual or busy sender host) catches up, as kernel pktgen does, and
// still sends them all at the rate, where a trial cut at d would end
// short of its rate by the stall and be taken for a generator that
// cannot offer it. A generator that really cannot is still found: its
// frames take longer than d, so it reaches less than the rate. The count
// is whole bursts of pktgen's burst, and at least one for each of threads
// (0: as the run chooses).
func trialFrames(rate float64, d time.Duration, burst, threads int) uint64 {
	u := uint64(max(burst, 1))
	n := uint64(math.Ceil(rate*d.Seconds()/float64(u))) * u
	return max(n, u*uint64(max(threads, 1)))
}
