package search

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// binaryBound is the most trials a binary search may take: one at MaxPPS,
// ceil(log2(range/resolution)) bisections and one at MinPPS.
func binaryBound(r *Result) int {
	return int(math.Ceil(math.Log2((r.MaxPPS-r.MinPPS)/r.ResolutionPPS))) + 2
}

func TestRFC2544(t *testing.T) {
	const max = lineRate64
	rng := rand.New(rand.NewPCG(1, 2))
	tests := []struct {
		name   string
		loss   curve
		opts   Options
		truth  float64 // highest rate within the goal
		trials int     // exact count, when the test pins it (0: only the bound)
		notes  string  // in the goal's note
	}{
		{name: "cliff at half", loss: cliff(0.5 * max), truth: 0.5 * max},
		{name: "cliff at 12.3%", loss: cliff(0.123 * max), truth: 0.123 * max},
		{name: "cliff at 99.5%", loss: cliff(0.995 * max), truth: 0.995 * max},
		{name: "cliff just above min", loss: cliff(0.011 * max), truth: 0.011 * max},
		{name: "cliff, absolute resolution 1000 pps", loss: cliff(7_654_321), truth: 7_654_321,
			opts: Options{Resolution: 1000}},
		{name: "cliff, relative resolution 0.5%", loss: cliff(0.37 * max), truth: 0.37 * max,
			opts: Options{RelativeResolution: 0.005}},
		{name: "cliff, min 10%", loss: cliff(0.42 * max), truth: 0.42 * max,
			opts: Options{MinPPS: 0.1 * max}},
		{name: "noisy cliff", loss: noisy(cliff(0.61*max), 0.001, rng), truth: 0.61 * max},
		{name: "knee, goal 0", loss: knee(0.4*max, 0.7*max), truth: 0.4 * max},
		{name: "knee, goal 0.5%", loss: knee(0.4*max, 0.7*max), truth: 0.7 * max / 0.997,
			opts: Options{LossGoal: 0.005}},
		{name: "knee, goal 0.1%", loss: knee(0.4*max, 0.7*max), truth: 0.4 * max,
			opts: Options{LossGoal: 0.001}},
		{name: "line rate: one trial", loss: cliff(2 * max), truth: max, trials: 1, notes: "line rate"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dv := &device{loss: tc.loss}
			o := tc.opts
			o.MaxPPS, o.Duration = max, 60*time.Second
			r, err := RFC2544(context.Background(), o, dv.trial)
			if err != nil {
				t.Fatal(err)
			}
			checkRecorded(t, r, dv)
			g := r.Goals[0]
			checkTruth(t, r, g, tc.truth)
			if len(r.Goals) != 1 || g.Goal != o.LossGoal {
				t.Errorf("goals %+v: want one, %g", r.Goals, o.LossGoal)
			}
			if !r.Complete || r.GeneratorLimited || g.GeneratorLimited {
				t.Errorf("complete %v, generator-limited %v/%v: want complete, not limited", r.Complete, r.GeneratorLimited, g.GeneratorLimited)
			}
			if n, bound := r.TrialCount, binaryBound(r); n > bound {
				t.Errorf("%d trials: more than the bound %d", n, bound)
			}
			if tc.trials != 0 && r.TrialCount != tc.trials {
				t.Errorf("%d trials, want %d", r.TrialCount, tc.trials)
			}
			if !strings.Contains(g.Note, tc.notes) {
				t.Errorf("note %q: want %q in it", g.Note, tc.notes)
			}
			if r.Trials[0].Phase != PhaseMax || r.Trials[0].RatePPS != max {
				t.Errorf("first trial %s at %.0f: want %s at MaxPPS", r.Trials[0].Phase, r.Trials[0].RatePPS, PhaseMax)
			}
			for _, tr := range r.Trials {
				if tr.Duration != o.Duration {
					t.Errorf("trial %d ran %v, want %v", tr.N, tr.Duration, o.Duration)
				}
			}
			t.Logf("%d trials (bound %d): throughput %.0f pps, truth %.0f, resolution %.0f",
				r.TrialCount, binaryBound(r), g.RatePPS, tc.truth, r.ResolutionPPS)
		})
	}
}

func TestRFC2544NothingMeetsTheGoal(t *testing.T) {
	dv := &device{loss: cliff(0.005 * lineRate64)} // below MinPPS (1 %)
	r, err := RFC2544(context.Background(), Options{MaxPPS: lineRate64, Duration: time.Second}, dv.trial)
	if err != nil {
		t.Fatal(err)
	}
	checkRecorded(t, r, dv)
	g := r.Goals[0]
	if g.Found || g.RatePPS != 0 || g.UpperPPS != r.MinPPS || !r.Complete {
		t.Errorf("got %+v (complete %v): want not found, upper bound at MinPPS %.0f", g, r.Complete, r.MinPPS)
	}
	if last := r.Trials[len(r.Trials)-1]; last.Phase != PhaseMin || last.RatePPS != r.MinPPS {
		t.Errorf("last trial %s at %.0f: want %s at %.0f", last.Phase, last.RatePPS, PhaseMin, r.MinPPS)
	}
	if !strings.Contains(g.Note, "lowest rate tried") {
		t.Errorf("note %q", g.Note)
	}
	if n, bound := r.TrialCount, binaryBound(r); n > bound {
		t.Errorf("%d trials: more than the bound %d", n, bound)
	}
}

// A generator that cannot reach the offered rate makes the trial invalid:
// never loss, never an upper bound. The search returns the highest rate
// the generator reaches, flagged.
func TestRFC2544GeneratorLimited(t *testing.T) {
	const max = lineRate64
	tests := []struct {
		name      string
		dv        device
		truth     float64
		limited   bool
		maxTrials int
	}{
		{name: "generator below the device", dv: device{loss: cliff(0.8 * max), gen: 0.3 * max},
			truth: 0.3 * max, limited: true, maxTrials: 3},
		// One stall (trial 3 reaches half its rate) is run again at the
		// same rate and caps nothing: the device's own rate is found.
		{name: "generator stalls once", dv: device{loss: cliff(0.5 * max), gen: 0.9 * max, stallAt: map[int]bool{3: true}},
			truth: 0.5 * max},
		{name: "generator reaches a little less each time", dv: device{loss: cliff(0.8 * max), gen: 0.3 * max, shortfall: 0.999},
			truth: 0.3 * max, limited: true, maxTrials: 3},
		{name: "generator above the device", dv: device{loss: cliff(0.5 * max), gen: 0.9 * max},
			truth: 0.5 * max},
		{name: "generator just above the device", dv: device{loss: cliff(0.5 * max), gen: 0.502 * max},
			truth: 0.5 * max},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dv := tc.dv
			r, err := RFC2544(context.Background(), Options{MaxPPS: max, Duration: 10 * time.Second}, dv.trial)
			if err != nil {
				t.Fatal(err)
			}
			checkRecorded(t, r, &dv)
			g := r.Goals[0]
			checkTruth(t, r, g, tc.truth)
			if g.GeneratorLimited != tc.limited || r.GeneratorLimited != tc.limited {
				t.Errorf("generator-limited %v/%v, want %v (%s)", g.GeneratorLimited, r.GeneratorLimited, tc.limited, g.Note)
			}
			if tc.limited && (g.UpperPPS != 0 || !strings.Contains(g.Note, "generator-limited")) {
				t.Errorf("upper bound %.0f, note %q: want none, and the note to say generator-limited", g.UpperPPS, g.Note)
			}
			if r.InvalidTrials == 0 {
				t.Error("no invalid trial")
			}
			for _, tr := range r.Trials {
				if tr.Outcome.GeneratorLimited && (tr.Valid || tr.Passes(1)) {
					t.Errorf("generator-limited trial %d counted: valid %v", tr.N, tr.Valid)
				}
			}
			if tc.maxTrials != 0 && r.TrialCount > tc.maxTrials {
				t.Errorf("%d trials, want at most %d", r.TrialCount, tc.maxTrials)
			}
			if n, bound := r.TrialCount, binaryBound(r)+2; n > bound {
				t.Errorf("%d trials: more than the bound %d", n, bound)
			}
			t.Logf("%d trials: %.0f pps, %s", r.TrialCount, g.RatePPS, g.Note)
		})
	}
}
