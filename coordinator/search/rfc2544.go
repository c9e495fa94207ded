package search

import (
	"context"
)

// RFC2544 finds the RFC 2544 §26.1 throughput: the highest offered rate
// whose loss ratio is at most o.LossGoal, by binary search between
// o.MinPPS and o.MaxPPS with trials of o.Duration. See the package
// documentation for the rules. On error the Result (never nil once the
// options are valid) holds every trial made and the best so far.
func RFC2544(ctx context.Context, o Options, fn TrialFunc) (*Result, error) {
	s, err := o.settings(fn, DefaultMaxTrialsRFC2544)
	if err != nil {
		return nil, err
	}
	if o.Goals != nil {
		return nil, invalid("Goals %v: RFC2544 has one goal, LossGoal (Goals is for NDRPDR)", o.Goals)
	}
	if o.InitialDuration != 0 {
		return nil, invalid("InitialDuration %v: RFC2544 runs every trial for Duration (InitialDuration is for NDRPDR)", o.InitialDuration)
	}
	if err := checkGoal("LossGoal", o.LossGoal); err != nil {
		return nil, err
	}
	goal := o.LossGoal
	x := newSearcher(TypeRFC2544, fn, s)
	for {
		rate, phase, done := x.nextBinary(goal)
		if done {
			return x.finish([]float64{goal}, 0, nil)
		}
		if _, err := x.run(ctx, rate, s.dur, phase, goal); err != nil {
			return x.finish([]float64{goal}, 0, err)
		}
	}
}

// nextBinary chooses the next rate of the binary search, or says it is done.
func (x *searcher) nextBinary(goal float64) (rate float64, phase string, done bool) {
	lo, hi := x.bounds(goal, 0)
	c, eps, res := x.ceiling, x.eps(), x.s.res
	switch {
	case lo != nil && hi != nil && hi.RatePPS-lo.RatePPS <= res+eps:
		return 0, "", true // within the resolution
	case lo != nil && lo.RatePPS >= c-eps:
		return 0, "", true // met the goal at the highest rate that can be offered
	case hi == nil || hi.RatePPS > c+eps:
		// The ceiling has not been tried: MaxPPS first, or the
		// generator's ceiling after a generator-limited trial.
		if c >= x.s.max-eps {
			return x.s.max, PhaseMax, false
		}
		return c, PhaseCeiling, false
	}
	floor := x.lowest()
	if lo != nil {
		floor = lo.RatePPS
	}
	switch {
	case lo == nil && hi.RatePPS <= floor+eps:
		return 0, "", true // missed the goal even at MinPPS
	case lo == nil && hi.RatePPS-floor <= res+eps:
		return floor, PhaseMin, false
	}
	return (floor + hi.RatePPS) / 2, PhaseBinary, false
}
