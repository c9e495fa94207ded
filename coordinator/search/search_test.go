package search

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

// checkTruth asserts that a goal's result brackets truth, the highest rate
// at which the device meets the goal, within the resolution.
func checkTruth(t *testing.T, r *Result, g GoalResult, truth float64) {
	t.Helper()
	checkTruthRange(t, r, g, truth, truth)
}

// checkTruthRange is checkTruth for a noisy device, whose truth lies
// between low and high.
func checkTruthRange(t *testing.T, r *Result, g GoalResult, low, high float64) {
	t.Helper()
	tol := 1e-9 * r.MaxPPS
	low, high = min(low, r.MaxPPS), min(high, r.MaxPPS)
	if !g.Found {
		t.Fatalf("goal %g: nothing found (%s); truth %.0f", g.Goal, g.Note, low)
	}
	if g.RatePPS > high+tol {
		t.Errorf("goal %g: rate %.0f above the truth %.0f", g.Goal, g.RatePPS, high)
	}
	if low-g.RatePPS > r.ResolutionPPS+tol {
		t.Errorf("goal %g: rate %.0f is %.0f below the truth %.0f: more than the resolution %.0f",
			g.Goal, g.RatePPS, low-g.RatePPS, low, r.ResolutionPPS)
	}
	// A generator-limited rate may have an upper bound further off: the
	// rates between could not be offered.
	if g.UpperPPS != 0 && (g.UpperPPS <= low-tol || !g.GeneratorLimited && g.UpperPPS-g.RatePPS > r.ResolutionPPS+tol) {
		t.Errorf("goal %g: upper bound %.0f: want above the truth %.0f and within %.0f of %.0f",
			g.Goal, g.UpperPPS, low, r.ResolutionPPS, g.RatePPS)
	}
	if g.UpperPPS == 0 && g.RatePPS < r.CeilingPPS-tol {
		t.Errorf("goal %g: no upper bound, yet rate %.0f is below the ceiling %.0f", g.Goal, g.RatePPS, r.CeilingPPS)
	}
}

// checkRecorded asserts that the result records every trial the device
// saw, in order, numbered from 1, and that the trial numbers of the goals
// point at the right trials.
func checkRecorded(t *testing.T, r *Result, dv *device) {
	t.Helper()
	if len(r.Trials) != len(dv.calls) || r.TrialCount != len(dv.calls) {
		t.Fatalf("recorded %d trials (count %d), the device saw %d", len(r.Trials), r.TrialCount, len(dv.calls))
	}
	invalid := 0
	for i, tr := range r.Trials {
		c := dv.calls[i]
		if tr.N != i+1 || tr.RatePPS != c.rate || tr.Duration != c.d || tr.Phase != c.phase {
			t.Errorf("trial %d recorded as n=%d %.0f pps %v %q; the device saw %.0f pps %v %q",
				i+1, tr.N, tr.RatePPS, tr.Duration, tr.Phase, c.rate, c.d, c.phase)
		}
		aborted := strings.HasPrefix(tr.Reason, "aborted: ")
		if tr.Valid == (tr.Outcome.GeneratorLimited || tr.Outcome.Err != nil || aborted) {
			t.Errorf("trial %d: valid %v with generator-limited %v, err %v", tr.N, tr.Valid, tr.Outcome.GeneratorLimited, tr.Outcome.Err)
		}
		if !tr.Valid {
			invalid++
			if tr.Passed || tr.Reason == "" {
				t.Errorf("invalid trial %d: passed %v, reason %q", tr.N, tr.Passed, tr.Reason)
			}
		}
	}
	if r.InvalidTrials != invalid {
		t.Errorf("InvalidTrials %d, counted %d", r.InvalidTrials, invalid)
	}
	for _, g := range r.Goals {
		if g.Found && (g.Trial < 1 || r.Trials[g.Trial-1].RatePPS != g.RatePPS || !r.Trials[g.Trial-1].Passes(g.Goal)) {
			t.Errorf("goal %g: trial %d does not set rate %.0f", g.Goal, g.Trial, g.RatePPS)
		}
		if g.UpperPPS != 0 && (g.UpperTrial < 1 || r.Trials[g.UpperTrial-1].RatePPS != g.UpperPPS || r.Trials[g.UpperTrial-1].Passes(g.Goal)) {
			t.Errorf("goal %g: trial %d does not set the upper bound %.0f", g.Goal, g.UpperTrial, g.UpperPPS)
		}
	}
}

// Both searches share the retry and abort rules.
var searches = []struct {
	name string
	fn   func(context.Context, Options, TrialFunc) (*Result, error)
}{{"rfc2544", RFC2544}, {"ndr-pdr", NDRPDR}}

func TestTrialFailsOnceIsRetried(t *testing.T) {
	for _, s := range searches {
		t.Run(s.name, func(t *testing.T) {
			o := Options{MaxPPS: lineRate64, Duration: 10 * time.Second}
			clean := &device{loss: cliff(0.3 * lineRate64)}
			want, err := s.fn(context.Background(), o, clean.trial)
			if err != nil {
				t.Fatal(err)
			}
			dv := &device{loss: cliff(0.3 * lineRate64), failAt: map[int]bool{2: true}}
			r, err := s.fn(context.Background(), o, dv.trial)
			if err != nil {
				t.Fatal(err)
			}
			checkRecorded(t, r, dv)
			if r.TrialCount != want.TrialCount+1 || r.InvalidTrials != 1 {
				t.Errorf("%d trials (%d invalid), want %d (1 invalid)", r.TrialCount, r.InvalidTrials, want.TrialCount+1)
			}
			failed, retry := r.Trials[1], r.Trials[2]
			if failed.Valid || !strings.Contains(failed.Reason, errAgentDied.Error()) || failed.Retry {
				t.Errorf("failed trial %+v", failed)
			}
			if !retry.Retry || !retry.Valid || retry.RatePPS != failed.RatePPS || retry.Duration != failed.Duration {
				t.Errorf("retry %+v of %+v", retry, failed)
			}
			for i, g := range r.Goals {
				if g.RatePPS != want.Goals[i].RatePPS || g.UpperPPS != want.Goals[i].UpperPPS {
					t.Errorf("goal %g: %.0f..%.0f, want %.0f..%.0f as without the failure",
						g.Goal, g.RatePPS, g.UpperPPS, want.Goals[i].RatePPS, want.Goals[i].UpperPPS)
				}
			}
		})
	}
}

func TestTrialAlwaysFails(t *testing.T) {
	for _, s := range searches {
		t.Run(s.name, func(t *testing.T) {
			dv := &device{loss: cliff(0.3 * lineRate64), failAt: map[int]bool{2: true, 3: true}}
			r, err := s.fn(context.Background(), Options{MaxPPS: lineRate64, Duration: 10 * time.Second}, dv.trial)
			if !errors.Is(err, ErrTrialFailed) || !errors.Is(err, errAgentDied) {
				t.Fatalf("error %v: want ErrTrialFailed and the agent's error", err)
			}
			rate := r.Trials[2].RatePPS
			if !strings.Contains(err.Error(), pps(rate)+" pps") || !strings.Contains(err.Error(), "trials 2 and 3") {
				t.Errorf("error %q: want it to name trials 2 and 3 and the rate %s pps", err, pps(rate))
			}
			checkRecorded(t, r, dv)
			if r.TrialCount != 3 || r.Complete || r.Note == "" {
				t.Errorf("%d trials, complete %v, note %q: want 3, incomplete, a note", r.TrialCount, r.Complete, r.Note)
			}
		})
	}
}

func TestTrialFuncErrorAborts(t *testing.T) {
	for _, s := range searches {
		t.Run(s.name, func(t *testing.T) {
			dv := &device{loss: cliff(0.3 * lineRate64), abortAt: 2}
			r, err := s.fn(context.Background(), Options{MaxPPS: lineRate64, Duration: 10 * time.Second}, dv.trial)
			if err == nil || !strings.Contains(err.Error(), "lost the coordinator") || !strings.Contains(err.Error(), "trial 2 at") {
				t.Fatalf("error %v: want the trial function's error, naming trial 2", err)
			}
			checkRecorded(t, r, dv)
			if r.TrialCount != 2 || r.Complete {
				t.Errorf("%d trials, complete %v: want 2, no retry, incomplete", r.TrialCount, r.Complete)
			}
		})
	}
}

// Cancelling the context stops the search at once: the running trial sees
// it, and no trial starts after.
func TestContextCancel(t *testing.T) {
	for _, s := range searches {
		t.Run(s.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			n := 0
			fn := func(ctx context.Context, rate float64, d time.Duration, phase string) (Outcome, error) {
				n++
				if n == 3 {
					time.AfterFunc(10*time.Millisecond, cancel)
					<-ctx.Done() // a trial in progress sees the cancel
					return Outcome{}, ctx.Err()
				}
				return (&device{loss: cliff(0.3 * lineRate64)}).trial(ctx, rate, d, phase)
			}
			start := time.Now()
			r, err := s.fn(ctx, Options{MaxPPS: lineRate64, Duration: time.Hour}, fn)
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("error %v: want context.Canceled", err)
			}
			if took := time.Since(start); took > 5*time.Second {
				t.Errorf("took %v to stop", took)
			}
			if n != 3 || r.TrialCount != 3 {
				t.Errorf("%d calls, %d trials: want 3, none after the cancel", n, r.TrialCount)
			}

			// Cancelled between trials: the next does not start.
			ctx2, cancel2 := context.WithCancel(context.Background())
			m := 0
			fn2 := func(ctx context.Context, rate float64, d time.Duration, phase string) (Outcome, error) {
				if m++; m == 2 {
					cancel2()
				}
				return (&device{loss: cliff(0.3 * lineRate64)}).trial(ctx, rate, d, phase)
			}
			r, err = s.fn(ctx2, Options{MaxPPS: lineRate64, Duration: time.Hour}, fn2)
			if !errors.Is(err, context.Canceled) || m != 2 || r.TrialCount != 2 {
				t.Errorf("error %v after %d calls, %d trials: want context.Canceled after 2", err, m, r.TrialCount)
			}
		})
	}
}

func TestMaxTrials(t *testing.T) {
	for _, s := range searches {
		t.Run(s.name, func(t *testing.T) {
			// RFC 2544 finds a lower bound on its third trial; NDR/PDR,
			// all trials final here, on its second (the forwarding rate).
			o := Options{MaxPPS: lineRate64, Duration: 10 * time.Second, MaxTrials: 3}
			if s.name == "ndr-pdr" {
				o.InitialDuration, o.MaxTrials = o.Duration, 2
			}
			dv := &device{loss: cliff(0.3 * lineRate64)}
			r, err := s.fn(context.Background(), o, dv.trial)
			if !errors.Is(err, ErrTrialLimit) {
				t.Fatalf("error %v: want ErrTrialLimit", err)
			}
			checkRecorded(t, r, dv)
			if r.TrialCount != o.MaxTrials || r.Complete || !strings.Contains(r.Note, "MaxTrials") {
				t.Errorf("%d trials, complete %v, note %q: want %d, incomplete, a note naming MaxTrials", r.TrialCount, r.Complete, r.Note, o.MaxTrials)
			}
			g := r.Goals[0]
			if !g.Found || g.RatePPS > 0.3*lineRate64 || !strings.Contains(g.Note, "best so far") {
				t.Errorf("goal %+v: want the best so far, at most the truth", g)
			}
		})
	}
}

func TestInvalidOptions(t *testing.T) {
	ok := Options{MaxPPS: lineRate64, Duration: time.Second}
	fn := (&device{loss: cliff(lineRate64)}).trial
	tests := []struct {
		name   string
		search string // "" both
		edit   func(*Options)
		fn     TrialFunc
		want   string
	}{
		{name: "no max", edit: func(o *Options) { o.MaxPPS = 0 }, want: "MaxPPS 0"},
		{name: "NaN max", edit: func(o *Options) { o.MaxPPS = math.NaN() }, want: "MaxPPS NaN"},
		{name: "min above max", edit: func(o *Options) { o.MinPPS = 2 * lineRate64 }, want: "MinPPS"},
		{name: "negative resolution", edit: func(o *Options) { o.Resolution = -1 }, want: "Resolution -1"},
		{name: "relative resolution 1", edit: func(o *Options) { o.RelativeResolution = 1 }, want: "RelativeResolution 1"},
		{name: "no duration", edit: func(o *Options) { o.Duration = 0 }, want: "Duration 0s"},
		{name: "negative initial", search: "ndr-pdr", edit: func(o *Options) { o.InitialDuration = -time.Second }, want: "InitialDuration -1s"},
		{name: "negative max trials", edit: func(o *Options) { o.MaxTrials = -1 }, want: "MaxTrials -1"},
		{name: "no trial function", fn: nil, edit: func(*Options) {}, want: "TrialFunc is nil"},
		{name: "loss goal 1", search: "rfc2544", edit: func(o *Options) { o.LossGoal = 1 }, want: "LossGoal 1"},
		{name: "goals for rfc2544", search: "rfc2544", edit: func(o *Options) { o.Goals = []float64{0} }, want: "Goals is for NDRPDR"},
		{name: "initial for rfc2544", search: "rfc2544", edit: func(o *Options) { o.InitialDuration = time.Second }, want: "InitialDuration is for NDRPDR"},
		{name: "loss goal for ndr-pdr", search: "ndr-pdr", edit: func(o *Options) { o.LossGoal = 0.01 }, want: "LossGoal is for RFC2544"},
		{name: "empty goals", search: "ndr-pdr", edit: func(o *Options) { o.Goals = []float64{} }, want: "Goals is empty"},
		{name: "negative goal", search: "ndr-pdr", edit: func(o *Options) { o.Goals = []float64{0, -0.1} }, want: "Goals -0.1"},
	}
	for _, tc := range tests {
		for _, s := range searches {
			if tc.search != "" && tc.search != s.name {
				continue
			}
			t.Run(s.name+"/"+tc.name, func(t *testing.T) {
				o := ok
				tc.edit(&o)
				f := fn
				if tc.name == "no trial function" {
					f = tc.fn
				}
				r, err := s.fn(context.Background(), o, f)
				if !errors.Is(err, ErrInvalidOptions) || !strings.Contains(err.Error(), tc.want) || r != nil {
					t.Errorf("error %v, result %v: want ErrInvalidOptions naming %q and no result", err, r, tc.want)
				}
			})
		}
	}
}
