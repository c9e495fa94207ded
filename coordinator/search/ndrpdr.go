package search

import (
	"context"
	"math"
	"slices"
	"time"
)

// NDRPDR finds the highest rate within each loss-ratio goal of o.Goals
// (default NDR, 0, and PDR, 0.005) in one search, in the manner of
// MLRsearch (RFC 9971): short trials of o.InitialDuration narrow the
// bounds of every goal at once, then trials of o.Duration confirm them.
// See the package documentation for the rules. On error the Result (never
// nil once the options are valid) holds every trial made and the best
// confirmed bounds so far.
func NDRPDR(ctx context.Context, o Options, fn TrialFunc) (*Result, error) {
	s, err := o.settings(fn, DefaultMaxTrialsNDRPDR)
	if err != nil {
		return nil, err
	}
	if o.LossGoal != 0 {
		return nil, invalid("LossGoal %v: NDRPDR takes its goals from Goals (LossGoal is for RFC2544)", o.LossGoal)
	}
	goals := []float64{NDRGoal, PDRGoal}
	if o.Goals != nil {
		if len(o.Goals) == 0 {
			return nil, invalid("Goals is empty: want nil (NDR and PDR: [0, 0.005]) or at least one loss ratio")
		}
		for _, g := range o.Goals {
			if err := checkGoal("Goals", g); err != nil {
				return nil, err
			}
		}
		goals = slices.Compact(slices.Sorted(slices.Values(o.Goals)))
	}
	s.goals = goals
	s.initial = o.InitialDuration
	if s.initial == 0 {
		s.initial = DefaultInitialDuration
	}
	phases := []struct {
		name string
		d    time.Duration
	}{{PhaseInitial, s.initial}, {PhaseFinal, s.dur}}
	if s.initial >= s.dur {
		phases = phases[1:]
	}
	x := newSearcher(TypeNDRPDR, fn, s)
	for _, ph := range phases {
		for {
			rate, goal, ok := x.nextMulti(ph.d)
			if !ok {
				break // every goal settled at this duration
			}
			phase := ph.name
			if len(x.trials) == 0 && rate >= s.max-x.eps() {
				phase = PhaseMax
			}
			if _, err := x.run(ctx, rate, ph.d, phase, goal); err != nil {
				return x.finish(goals, s.dur, err)
			}
		}
	}
	return x.finish(goals, s.dur, nil)
}

// nextMulti returns the next rate to try at duration d and the goal it is
// for: that of the first goal (lowest loss ratio first) not yet settled by
// the trials of at least d. ok is false when every goal is settled.
func (x *searcher) nextMulti(d time.Duration) (rate, goal float64, ok bool) {
	for _, g := range x.s.goals {
		if r, done := x.nextFor(g, d); !done {
			return r, g, true
		}
	}
	return 0, 0, false
}

// nextFor chooses the next rate for one goal at duration d, or says the
// goal is settled there: its relevant bounds (trials of at least d) are
// within the resolution, or it met the goal at the ceiling, or it missed
// it at the lowest rate.
func (x *searcher) nextFor(goal float64, d time.Duration) (rate float64, done bool) {
	lo, hi := x.bounds(goal, d)
	c, eps, res, floor := x.ceiling, x.eps(), x.s.res, x.lowest()
	switch {
	case lo != nil && hi != nil && hi.RatePPS-lo.RatePPS <= res+eps:
		return 0, true
	case lo != nil && lo.RatePPS >= c-eps:
		return 0, true
	case lo == nil && hi != nil && hi.RatePPS <= floor+eps:
		return 0, true
	}
	// Hints are the bounds from trials of any duration: in the final
	// phase, where the short trials put the bounds.
	plo, phi := x.bounds(goal, 0)
	switch {
	case lo != nil && hi != nil:
		// Where shorter trials put a bound in between, if they did.
		if plo != nil && plo.RatePPS > lo.RatePPS && plo.RatePPS < hi.RatePPS {
			rate = plo.RatePPS
			break
		}
		if phi != nil && phi.RatePPS > lo.RatePPS && phi.RatePPS < hi.RatePPS {
			rate = phi.RatePPS
			break
		}
		// Else: when the upper bound's forwarding estimate puts the
		// goal's edge at the lower bound, step up from it (by the
		// resolution, doubling with each lower bound found); when it
		// puts the edge in the lower half, try there; else bisect.
		// (A trial within a tenth of the resolution of a bound would
		// tell next to nothing.)
		mid := (lo.RatePPS + hi.RatePPS) / 2
		switch f := forwarding(*hi, goal); {
		case f <= lo.RatePPS+res/10:
			step := res
			if l2 := x.below(goal, d, lo.RatePPS); l2 != nil {
				step = max(res, 2*(lo.RatePPS-l2.RatePPS))
			}
			rate = min(mid, lo.RatePPS+step)
		case f < mid:
			rate = f
		default:
			rate = mid
		}
	case lo != nil:
		// No upper bound at this duration: where a shorter trial
		// missed the goal, or the ceiling.
		rate = c
		if up := x.upperHint(goal, lo.RatePPS); up != nil {
			rate = up.RatePPS
		}
	case hi != nil:
		// No lower bound at this duration: where a shorter trial met
		// the goal, or below hi by a step that doubles with every
		// upper bound found, or lower where hi's forwarding rate says.
		if plo != nil && plo.RatePPS < hi.RatePPS {
			rate = plo.RatePPS
			break
		}
		step := res * math.Exp2(float64(x.count(goal, d, false)-1))
		rate = min(hi.RatePPS-step, forwarding(*hi, goal))
	case plo != nil:
		rate = plo.RatePPS // confirm a lower bound from shorter trials
	case phi != nil:
		rate = phi.RatePPS // nothing met the goal in shorter trials
	default:
		rate = c // nothing yet: MaxPPS, or the generator's ceiling
	}
	return min(max(rate, floor), c), false
}

// below returns the trial of highest rate below rate, of at least d, that
// met the goal.
func (x *searcher) below(goal float64, d time.Duration, rate float64) *Trial {
	var lo *Trial
	for i := range x.trials {
		t := &x.trials[i]
		if t.Valid && t.Duration >= d && t.Passes(goal) && t.RatePPS < rate && (lo == nil || t.RatePPS > lo.RatePPS) {
			lo = t
		}
	}
	return lo
}

// upperHint returns the trial of lowest rate above rate, of any duration,
// that missed the goal.
func (x *searcher) upperHint(goal, rate float64) *Trial {
	var up *Trial
	for i := range x.trials {
		t := &x.trials[i]
		if t.Valid && !t.Passes(goal) && t.RatePPS > rate && (up == nil || t.RatePPS < up.RatePPS) {
			up = t
		}
	}
	return up
}

// forwarding estimates from a trial that missed the goal the rate at which
// the loss ratio would be the goal: the rate the device forwarded,
// scaled up by the loss the goal allows. Exact for a device that forwards
// a fixed rate and drops the excess.
func forwarding(t Trial, goal float64) float64 {
	return t.RatePPS * (1 - t.Outcome.LossRatio) / (1 - goal)
}
