package search

import (
	"context"
	"fmt"
)

// Back-to-back phases (RFC 2544 §26.4), as passed to the BurstFunc and
// recorded in Burst.Phase.
const (
	PhaseBurstMax    = "burst-max"    // the longest burst searched, first when there is no hint
	PhaseBurstHint   = "burst-hint"   // around the previous trial's answer: it, then a step past it
	PhaseBurstBinary = "burst-binary" // a bisection step between the bounds
)

// DefaultMaxBurstsPerTrial bounds the bursts of one back-to-back trial
// when BurstOptions.MaxBursts is 0: enough for a binary search over
// 2^40 frames from a hint that is far off.
const DefaultMaxBurstsPerTrial = 90

// BurstFunc sends one burst of frames frames per flow at the medium's
// maximum rate and reports what it measured. phase is one of the
// PhaseBurst constants, for progress displays. A returned error aborts
// the search (use Outcome.Err for a burst that failed to run and may be
// retried).
type BurstFunc func(ctx context.Context, frames uint64, phase string) (Outcome, error)

// BurstOptions configure one back-to-back trial: a search by burst length
// for the longest burst with no loss.
type BurstOptions struct {
	// MaxFrames is the longest burst searched (required): RFC 2544's
	// trial length at the maximum rate. A device that carries it with no
	// loss has a back-to-back value of at least MaxFrames.
	MaxFrames uint64
	// MinFrames is the shortest burst searched; 0 means 1. A device that
	// loses some of MinFrames has no back-to-back value here.
	MinFrames uint64
	// Resolution, in frames, stops the search when the longest burst
	// with no loss and the shortest with loss are this close; 0 means 1
	// (exact).
	Resolution uint64
	// Hint, when set, is where the device's answer is expected (the
	// previous trial's): the search tries it and a resolution step past
	// it first, and widens its steps from there, so a steady device is
	// measured in two bursts.
	Hint uint64
	// MaxBursts bounds the bursts, retries included; 0 means
	// DefaultMaxBurstsPerTrial.
	MaxBursts int
}

// Burst is one burst as the search recorded it.
type Burst struct {
	N       int     `json:"n"` // 1-based, in the order sent
	Phase   string  `json:"phase"`
	Frames  uint64  `json:"frames"` // per flow
	Outcome Outcome `json:"outcome"`
	// Valid is false for a burst that failed to run; Passed says that
	// every frame sent was received.
	Valid  bool   `json:"valid"`
	Passed bool   `json:"passed"`
	Retry  bool   `json:"retry,omitempty"`
	Reason string `json:"reason,omitempty"`
}

// BurstResult is the outcome of one back-to-back trial.
type BurstResult struct {
	// Found reports that some burst passed: Frames is then the longest
	// that did (the trial's back-to-back value), else 0.
	Found  bool   `json:"found"`
	Frames uint64 `json:"frames"`
	// UpperFrames is the shortest burst that lost frames, 0 when none
	// did.
	UpperFrames uint64 `json:"upper_frames,omitempty"`
	// AtMax reports that the longest burst searched passed: the device's
	// value is at least Frames, a lower bound, not a limit found.
	AtMax bool `json:"at_max,omitempty"`
	// Complete reports that the bounds met the resolution (or the search
	// ended at MaxFrames or MinFrames).
	Complete bool    `json:"complete"`
	Bursts   []Burst `json:"bursts"`
	Note     string  `json:"note,omitempty"`
}

// burstPasses is the verdict of a burst that ran: every frame sent was
// received, and something was sent.
func burstPasses(o Outcome) bool {
	return o.Sent > 0 && o.Lost == 0 && o.Received >= o.Sent
}

// BackToBack runs one RFC 2544 §26.4 back-to-back trial: the longest
// burst, from o.MinFrames to o.MaxFrames frames per flow, that the device
// carries with no loss. A burst passes when every frame sent was received
// (the run's books balanced with nothing lost); a burst that failed to
// run is sent again once and a second failure stops the search with
// ErrTrialFailed. The search assumes that a device that loses part of a
// burst loses part of any longer one.
//
// Without a hint, the first burst is MaxFrames (a device that carries
// it is done in one burst, AtMax); after it lost frames the search
// bisects between the longest burst that passed (none yet: below
// MinFrames) and the shortest that lost, until they are within the
// resolution, trying MinFrames last when nothing above it passed. With a
// hint (the previous trial's answer), it tries the hint and one
// resolution step past it, widening the step by doubling while the
// bursts keep the same verdict, then bisects between the bounds: a
// steady device costs two bursts a trial, a device that drifted by k
// steps about 2·log2(k) more. At most ceil(log2((MaxFrames −
// MinFrames) / resolution)) + 2 bursts without a hint, twice that with
// one, plus one per burst that failed to run.
//
// On an error after the options were accepted the result holds every
// burst sent and the best so far, Complete false.
func BackToBack(ctx context.Context, o BurstOptions, fn BurstFunc) (*BurstResult, error) {
	if fn == nil {
		return nil, invalid("BurstFunc is nil: want a function that sends one burst")
	}
	if o.MaxFrames == 0 {
		return nil, invalid("MaxFrames 0: want the longest burst searched, in frames per flow (at least 1)")
	}
	if o.MinFrames == 0 {
		o.MinFrames = 1
	}
	if o.MinFrames > o.MaxFrames {
		return nil, invalid("MinFrames %d: want at most MaxFrames %d", o.MinFrames, o.MaxFrames)
	}
	if o.Resolution == 0 {
		o.Resolution = 1
	}
	if o.MaxBursts < 0 {
		return nil, invalid("MaxBursts %d: want 0 (default) or a positive count", o.MaxBursts)
	}
	if o.MaxBursts == 0 {
		o.MaxBursts = DefaultMaxBurstsPerTrial
	}
	b := &burster{o: o, fn: fn}
	err := b.search(ctx)
	return b.result(err), err
}

// burster is one back-to-back trial in progress. lo is the longest burst
// that passed (0: none), hi the shortest that lost (0: none).
type burster struct {
	o      BurstOptions
	fn     BurstFunc
	lo, hi uint64
	bursts []Burst
}

func (b *burster) search(ctx context.Context) error {
	o := b.o
	if h := min(max(o.Hint, o.MinFrames), o.MaxFrames); o.Hint > 0 && h < o.MaxFrames {
		if err := b.gallop(ctx, h); err != nil {
			return err
		}
	} else if _, err := b.send(ctx, o.MaxFrames, PhaseBurstMax); err != nil {
		return err
	}
	for {
		n, phase, done := b.next()
		if done {
			return nil
		}
		if _, err := b.send(ctx, n, phase); err != nil {
			return err
		}
	}
}

// gallop tries the hint h, then steps of growing length away from it in
// the direction its verdict says, until a burst's verdict differs (a
// bound on each side) or the search reaches MaxFrames or MinFrames.
func (b *burster) gallop(ctx context.Context, h uint64) error {
	o := b.o
	pass, err := b.send(ctx, h, PhaseBurstHint)
	if err != nil {
		return err
	}
	for step := o.Resolution; ; step *= 2 {
		var n uint64
		switch {
		case pass && h >= o.MaxFrames, !pass && h <= o.MinFrames:
			return nil
		case pass:
			n = h + min(step, o.MaxFrames-h)
		default:
			n = h - min(step, h-o.MinFrames)
		}
		again, err := b.send(ctx, n, PhaseBurstHint)
		if err != nil {
			return err
		}
		if again != pass {
			return nil
		}
		h = n
	}
}

// next is the next burst of the bisection, or done.
func (b *burster) next() (frames uint64, phase string, done bool) {
	o := b.o
	switch {
	case b.hi == 0:
		return 0, "", true // MaxFrames passed
	case b.lo == 0 && b.hi <= o.MinFrames:
		return 0, "", true // lost frames even at MinFrames
	case b.lo == 0 && b.hi-o.MinFrames <= o.Resolution:
		return o.MinFrames, PhaseBurstBinary, false
	case b.lo > 0 && b.hi-b.lo <= o.Resolution:
		return 0, "", true
	}
	floor := b.lo
	if floor == 0 {
		floor = o.MinFrames
	}
	return floor + (b.hi-floor)/2, PhaseBurstBinary, false
}

// send sends a burst of n frames, once more when it failed to run, and
// records it; pass is its verdict.
func (b *burster) send(ctx context.Context, n uint64, phase string) (pass bool, err error) {
	for attempt := 0; ; attempt++ {
		k := len(b.bursts) + 1
		if err := ctx.Err(); err != nil {
			return false, fmt.Errorf("back-to-back search: stopped before burst %d of %d frames: %w", k, n, err)
		}
		if k > b.o.MaxBursts {
			return false, fmt.Errorf("back-to-back search: %w: %d bursts (MaxBursts) sent before the bounds met the resolution of %d frames", ErrTrialLimit, b.o.MaxBursts, b.o.Resolution)
		}
		out, ferr := b.fn(ctx, n, phase)
		t := Burst{N: k, Phase: phase, Frames: n, Outcome: out, Retry: attempt > 0}
		switch {
		case ferr != nil:
			t.Reason = "aborted: " + ferr.Error()
		case out.Err != nil:
			t.Reason = "failed: " + out.Err.Error()
		default:
			t.Valid, t.Passed = true, burstPasses(out)
		}
		b.bursts = append(b.bursts, t)
		switch {
		case ferr != nil:
			return false, fmt.Errorf("back-to-back search: burst %d of %d frames (%s): %w", k, n, phase, ferr)
		case out.Err != nil && attempt == 0:
			continue
		case out.Err != nil:
			return false, fmt.Errorf("back-to-back search: bursts %d and %d of %d frames (%s) %w: %w", k-1, k, n, phase, ErrTrialFailed, out.Err)
		}
		if t.Passed && n > b.lo {
			b.lo = n
		}
		if !t.Passed && (b.hi == 0 || n < b.hi) {
			b.hi = n
		}
		if b.hi > 0 && b.lo >= b.hi {
			// A device that carried a longer burst than one it lost
			// frames of is not what the search assumes: the longest
			// burst that passed below the shortest that lost stands.
			b.lo = 0
			for _, x := range b.bursts {
				if x.Passed && x.Frames < b.hi && x.Frames > b.lo {
					b.lo = x.Frames
				}
			}
		}
		return t.Passed, nil
	}
}

// result is the trial's answer from the bursts sent.
func (b *burster) result(err error) *BurstResult {
	r := &BurstResult{Found: b.lo > 0, Frames: b.lo, UpperFrames: b.hi, Complete: err == nil, Bursts: b.bursts}
	if r.Bursts == nil {
		r.Bursts = []Burst{}
	}
	r.AtMax = b.lo == b.o.MaxFrames
	switch {
	case err != nil:
		r.Note = err.Error()
	case r.AtMax:
		r.Note = fmt.Sprintf("carried the longest burst searched, %d frames, with no loss: the back-to-back value is at least that", b.lo)
	case !r.Found:
		r.Note = fmt.Sprintf("lost frames even of the shortest burst searched, %d frames", b.o.MinFrames)
	}
	return r
}
