package search

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"
)

// Sentinel errors, for callers that branch on why a search stopped.
var (
	// ErrInvalidOptions is returned when the Options were refused before any
	// trial ran.
	ErrInvalidOptions = errors.New("invalid search options")
	// ErrTrialLimit is returned when MaxTrials trials ran before the bounds
	// met the resolution. The Result returned with it holds the best so far.
	ErrTrialLimit = errors.New("trial limit reached")
	// ErrTrialFailed is returned when a trial failed to run (Outcome.Err)
	// twice in a row.
	ErrTrialFailed = errors.New("failed twice")
)

// Defaults of Options.
const (
	DefaultMinFraction        = 0.01 // MinPPS = 1 % of MaxPPS
	DefaultRelativeResolution = 0.01 // resolution = 1 % of MaxPPS
	DefaultInitialDuration    = time.Second
	DefaultMaxTrialsRFC2544   = 30
	DefaultMaxTrialsNDRPDR    = 60
	NDRGoal                   = 0.0   // non-drop rate: no loss at all
	PDRGoal                   = 0.005 // partial drop rate: at most 0.5 % lost
)

// Trial phases, as passed to the TrialFunc and recorded in Trial.Phase.
const (
	PhaseMax     = "max"     // the first trial, at MaxPPS
	PhaseBinary  = "binary"  // RFC 2544: a bisection step
	PhaseCeiling = "ceiling" // RFC 2544: the highest rate the generator can offer, after a generator-limited trial
	PhaseMin     = "min"     // RFC 2544: the floor, when nothing above it met the goal
	PhaseInitial = "initial" // NDR/PDR: a short trial that narrows the bounds
	PhaseFinal   = "final"   // NDR/PDR: a full-duration trial that confirms (or moves) a bound
)

// Outcome is what one trial measured. Rates are per flow.
type Outcome struct {
	OfferedPPS  float64 `json:"offered_pps"`
	AchievedPPS float64 `json:"achieved_pps"` // what the senders reached
	Sent        uint64  `json:"sent"`
	Received    uint64  `json:"received"`
	Lost        uint64  `json:"lost"`
	LossRatio   float64 `json:"loss_ratio"` // what the search compares with the goals
	// GeneratorLimited reports that the senders did not reach the offered
	// rate. The trial is invalid: it says nothing about loss at that rate.
	GeneratorLimited bool `json:"generator_limited"`
	// Err is set when the run failed (an agent died, ...). Invalid too; the
	// trial is retried once.
	Err error `json:"-"`
}

// TrialFunc performs one real trial: every flow offered ratePPS for d.
// phase is one of the Phase constants, for progress displays. A returned
// error aborts the whole search (use Outcome.Err for a run that failed and
// may be retried).
type TrialFunc func(ctx context.Context, ratePPS float64, d time.Duration, phase string) (Outcome, error)

// Trial is one trial as the search recorded it, valid or not.
type Trial struct {
	N        int           `json:"n"` // 1-based, in the order run
	Phase    string        `json:"phase"`
	RatePPS  float64       `json:"rate_pps"` // offered, per flow
	Duration time.Duration `json:"duration"`
	Outcome  Outcome       `json:"outcome"`
	// Goal is the loss-ratio goal the trial was chosen for; Passed says
	// whether it met it. Use Passes for the other goals of an NDR/PDR search.
	Goal   float64 `json:"goal"`
	Valid  bool    `json:"valid"` // false: generator-limited or failed; never counted as loss
	Passed bool    `json:"passed"`
	Retry  bool    `json:"retry,omitempty"`  // repeats the trial before it, which failed to run
	Reason string  `json:"reason,omitempty"` // why it is invalid
}

// Passes reports whether the trial is valid and its loss ratio is within goal.
func (t Trial) Passes(goal float64) bool { return t.Valid && t.Outcome.LossRatio <= goal }

// GoalResult is the answer for one loss-ratio goal.
type GoalResult struct {
	Goal float64 `json:"goal"`
	// Found reports that a trial met the goal. RatePPS is then the highest
	// rate that did (the lower bound: the throughput for goal 0, NDR,
	// PDR...); otherwise RatePPS is 0.
	Found     bool    `json:"found"`
	RatePPS   float64 `json:"rate_pps"`
	LossRatio float64 `json:"loss_ratio"` // of the trial at RatePPS
	Trial     int     `json:"trial,omitempty"`
	// UpperPPS is the lowest rate above RatePPS that missed the goal (the
	// upper bound), 0 when none did (the goal was met at MaxPPS or at the
	// generator's ceiling).
	UpperPPS   float64 `json:"upper_pps,omitempty"`
	UpperTrial int     `json:"upper_trial,omitempty"`
	// GeneratorLimited reports that RatePPS is the highest rate the senders
	// could offer, below MaxPPS: the device carries at least RatePPS, and
	// what it carries above that could not be measured.
	GeneratorLimited bool   `json:"generator_limited,omitempty"`
	Note             string `json:"note,omitempty"`
}

// Result is the outcome of a search.
type Result struct {
	Search        Type    `json:"search"` // TypeRFC2544 or TypeNDRPDR
	MaxPPS        float64 `json:"max_pps"`
	MinPPS        float64 `json:"min_pps"`
	ResolutionPPS float64 `json:"resolution_pps"`
	// CeilingPPS is the highest rate the search may still offer: MaxPPS,
	// or lower after generator-limited trials.
	CeilingPPS float64 `json:"ceiling_pps"`
	// Goals, in ascending order of loss ratio: one for RFC2544, NDR then
	// PDR for the default NDRPDR.
	Goals      []GoalResult `json:"goals"`
	Trials     []Trial      `json:"trials"` // every trial, in the order run
	TrialCount int          `json:"trial_count"`
	// InvalidTrials counts the generator-limited and failed trials.
	InvalidTrials int `json:"invalid_trials"`
	// GeneratorLimited reports that some goal's rate is the generator's
	// ceiling.
	GeneratorLimited bool `json:"generator_limited"`
	// Complete reports that every goal's bounds were settled. False when the
	// search stopped early (an error, MaxTrials); the goals are then the best
	// so far.
	Complete bool   `json:"complete"`
	Note     string `json:"note,omitempty"`
}

// Options configure a search. Rates are per flow, in packets per second.
type Options struct {
	// MaxPPS is the theoretical line rate for the frame size (required).
	MaxPPS float64
	// MinPPS is the lowest rate tried; 0 means 1 % of MaxPPS.
	MinPPS float64
	// Resolution is the bound gap, in pps, at which the search stops (upper −
	// lower bound ≤ Resolution). 0 means RelativeResolution × MaxPPS.
	Resolution float64
	// RelativeResolution is the resolution as a fraction of MaxPPS, used
	// when Resolution is 0; 0 means 0.01.
	RelativeResolution float64
	// Duration is the full trial duration (required): every RFC 2544
	// trial, and the final trials of NDR/PDR.
	Duration time.Duration
	// MaxTrials bounds the trials, retries included; 0 means 30 for
	// RFC2544 and 60 for NDRPDR.
	MaxTrials int

	// LossGoal (RFC2544 only) is the highest loss ratio that passes.
	LossGoal float64

	// Goals (NDRPDR only) are the loss-ratio goals, each in [0, 1); nil
	// means NDR and PDR: [0, 0.005].
	Goals []float64
	// InitialDuration (NDRPDR only) is the duration of the short trials
	// that narrow the bounds; 0 means 1 s. At or above Duration, every
	// trial is a final one.
	InitialDuration time.Duration
}

// settings are Options checked and with the defaults filled in.
type settings struct {
	max, min, res float64
	dur, initial  time.Duration
	goals         []float64
	maxTrials     int
}

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalidOptions, fmt.Sprintf(format, args...))
}

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

func checkGoal(name string, g float64) error {
	if !finite(g) || g < 0 || g >= 1 {
		return invalid("%s %v: want a loss ratio in [0, 1), e.g. 0 or 0.005", name, g)
	}
	return nil
}

// settings checks the options common to both searches and fills in defaults.
func (o Options) settings(fn TrialFunc, maxTrials int) (settings, error) {
	var s settings
	if fn == nil {
		return s, invalid("TrialFunc is nil: want a function that runs one trial")
	}
	if !finite(o.MaxPPS) || o.MaxPPS <= 0 {
		return s, invalid("MaxPPS %v: want a positive per-flow rate (the theoretical line rate for the frame size)", o.MaxPPS)
	}
	if !finite(o.MinPPS) || o.MinPPS < 0 || o.MinPPS >= o.MaxPPS {
		return s, invalid("MinPPS %v: want 0 (1 %% of MaxPPS) or a rate below MaxPPS %s", o.MinPPS, pps(o.MaxPPS))
	}
	if !finite(o.Resolution) || o.Resolution < 0 {
		return s, invalid("Resolution %v: want 0 (relative) or a positive number of pps", o.Resolution)
	}
	if !finite(o.RelativeResolution) || o.RelativeResolution < 0 || o.RelativeResolution >= 1 {
		return s, invalid("RelativeResolution %v: want a fraction of MaxPPS in [0, 1), e.g. 0.005", o.RelativeResolution)
	}
	if o.Duration <= 0 {
		return s, invalid("Duration %v: want the full trial duration, e.g. 60s", o.Duration)
	}
	if o.InitialDuration < 0 {
		return s, invalid("InitialDuration %v: want 0 (1s) or a positive duration", o.InitialDuration)
	}
	if o.MaxTrials < 0 {
		return s, invalid("MaxTrials %d: want 0 (default) or a positive count", o.MaxTrials)
	}
	s = settings{max: o.MaxPPS, min: o.MinPPS, res: o.Resolution, dur: o.Duration, maxTrials: o.MaxTrials}
	if s.min == 0 {
		s.min = DefaultMinFraction * s.max
	}
	if s.res == 0 {
		rel := o.RelativeResolution
		if rel == 0 {
			rel = DefaultRelativeResolution
		}
		s.res = rel * s.max
	}
	if s.maxTrials == 0 {
		s.maxTrials = maxTrials
	}
	return s, nil
}

// searcher holds the state both searches share: the trials so far and the
// generator's ceiling.
type searcher struct {
	name    Type
	fn      TrialFunc
	s       settings
	ceiling float64 // the highest rate the search may offer
	trials  []Trial
}

func newSearcher(name Type, fn TrialFunc, s settings) *searcher {
	return &searcher{name: name, fn: fn, s: s, ceiling: s.max}
}

// eps is the tolerance of rate comparisons.
func (x *searcher) eps() float64 { return 1e-9 * x.s.max }

// lowest is the lowest rate the search offers.
func (x *searcher) lowest() float64 { return min(x.s.min, x.ceiling) }

// run performs one trial at rate for d, retrying once a trial that failed
// to run or fell short of its rate. It records every attempt and lowers
// the ceiling after two generator-limited ones in a row.
func (x *searcher) run(ctx context.Context, rate float64, d time.Duration, phase string, goal float64) (Trial, error) {
	for attempt := 0; ; attempt++ {
		n := len(x.trials) + 1
		if err := ctx.Err(); err != nil {
			return Trial{}, fmt.Errorf("%s search: stopped before trial %d at %s pps: %w", x.name, n, pps(rate), err)
		}
		if n > x.s.maxTrials {
			return Trial{}, fmt.Errorf("%s search: %w: %d trials (MaxTrials) ran before the bounds met the resolution of %s pps", x.name, ErrTrialLimit, x.s.maxTrials, pps(x.s.res))
		}
		out, err := x.fn(ctx, rate, d, phase)
		t := Trial{N: n, Phase: phase, RatePPS: rate, Duration: d, Outcome: out, Goal: goal, Retry: attempt > 0}
		switch {
		case err != nil:
			t.Reason = "aborted: " + err.Error()
		case out.Err != nil:
			t.Reason = "failed: " + out.Err.Error()
		case out.GeneratorLimited:
			t.Reason = fmt.Sprintf("generator-limited: the senders reached %s of %s pps", pps(out.AchievedPPS), pps(rate))
		default:
			t.Valid = true
			t.Passed = t.Passes(goal)
		}
		x.trials = append(x.trials, t)
		switch {
		case err != nil:
			return t, fmt.Errorf("%s search: trial %d at %s pps (%s, %s): %w", x.name, n, pps(rate), phase, d, err)
		case out.Err != nil && attempt == 0:
			continue
		case out.Err != nil:
			return t, fmt.Errorf("%s search: trials %d and %d at %s pps (%s, %s) %w: %w", x.name, n-1, n, pps(rate), phase, d, ErrTrialFailed, out.Err)
		case out.GeneratorLimited && attempt == 0:
			// Once more at the same rate: a generator on a busy or
			// virtual host falls short now and then (a stall), and one
			// such trial must not cap the search.
			continue
		case out.GeneratorLimited:
			x.limit(rate, out.AchievedPPS)
		}
		return t, nil
	}
}

// limit lowers the ceiling after a generator-limited trial at rate that
// reached achieved: rates from there up cannot be measured. The new
// ceiling is what the senders reached, and at least one resolution step
// below rate, so that a generator that keeps falling short a little
// cannot hold the search at one rate.
func (x *searcher) limit(rate, achieved float64) {
	c := rate - x.s.res
	if achieved > 0 && achieved < c {
		c = achieved
	}
	if c <= 0 {
		c = rate / 2
	}
	x.ceiling = min(x.ceiling, c)
}

// bounds returns, for a goal, the relevant upper bound — the lowest rate
// with a valid trial of at least minDur that missed the goal — and the
// relevant lower bound — the highest rate below it with such a trial that
// met it. Either is nil when there is none.
func (x *searcher) bounds(goal float64, minDur time.Duration) (lo, hi *Trial) {
	for i := range x.trials {
		t := &x.trials[i]
		if t.Valid && t.Duration >= minDur && !t.Passes(goal) && (hi == nil || t.RatePPS < hi.RatePPS) {
			hi = t
		}
	}
	for i := range x.trials {
		t := &x.trials[i]
		if t.Valid && t.Duration >= minDur && t.Passes(goal) && (hi == nil || t.RatePPS < hi.RatePPS) && (lo == nil || t.RatePPS > lo.RatePPS) {
			lo = t
		}
	}
	return lo, hi
}

// count returns how many valid trials of at least minDur met (pass) or
// missed (!pass) the goal.
func (x *searcher) count(goal float64, minDur time.Duration, pass bool) int {
	n := 0
	for _, t := range x.trials {
		if t.Valid && t.Duration >= minDur && t.Passes(goal) == pass {
			n++
		}
	}
	return n
}

// result builds the Result from the trials of at least minDur.
func (x *searcher) result(goals []float64, minDur time.Duration, complete bool) *Result {
	r := &Result{
		Search: x.name, MaxPPS: x.s.max, MinPPS: x.s.min, ResolutionPPS: x.s.res, CeilingPPS: x.ceiling,
		Trials: slices.Clone(x.trials), TrialCount: len(x.trials), Complete: complete,
	}
	if r.Trials == nil {
		r.Trials = []Trial{}
	}
	for _, t := range x.trials {
		if !t.Valid {
			r.InvalidTrials++
		}
	}
	for _, g := range goals {
		gr := x.goalResult(g, minDur, complete)
		r.GeneratorLimited = r.GeneratorLimited || gr.GeneratorLimited
		r.Goals = append(r.Goals, gr)
	}
	return r
}

func (x *searcher) goalResult(goal float64, minDur time.Duration, complete bool) GoalResult {
	gr := GoalResult{Goal: goal}
	lo, hi := x.bounds(goal, minDur)
	if hi != nil {
		gr.UpperPPS, gr.UpperTrial = hi.RatePPS, hi.N
	}
	if lo == nil {
		switch {
		case hi == nil:
			gr.Note = "no valid trial"
		case complete:
			gr.Note = fmt.Sprintf("loss ratio above %g even at the lowest rate tried, %s pps", goal, pps(hi.RatePPS))
		default:
			gr.Note = "no rate met the goal before the search stopped"
		}
		return gr
	}
	gr.Found, gr.RatePPS, gr.LossRatio, gr.Trial = true, lo.RatePPS, lo.Outcome.LossRatio, lo.N
	settled := hi != nil && hi.RatePPS-lo.RatePPS <= x.s.res+x.eps()
	atCeiling := lo.RatePPS >= x.ceiling-x.eps()
	switch {
	case settled:
	case atCeiling && x.ceiling < x.s.max-x.eps():
		gr.GeneratorLimited = true
		gr.Note = fmt.Sprintf("throughput ≥ %s pps, generator-limited: the senders could not offer more", pps(lo.RatePPS))
	case atCeiling:
		gr.Note = "met the goal at MaxPPS (line rate)"
	case !complete:
		gr.Note = "best so far: the bounds had not met the resolution when the search stopped"
	}
	return gr
}

// finish returns the result of a search that ended with err (nil: done).
func (x *searcher) finish(goals []float64, minDur time.Duration, err error) (*Result, error) {
	r := x.result(goals, minDur, err == nil)
	if err != nil {
		r.Note = err.Error()
	}
	return r, err
}

// pps formats a rate for messages.
func pps(r float64) string {
	if math.Abs(r) >= 100 {
		return strconv.FormatFloat(r, 'f', 0, 64)
	}
	return strconv.FormatFloat(r, 'g', 4, 64)
}
