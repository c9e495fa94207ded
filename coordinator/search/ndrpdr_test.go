package search

import (
	"context"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

// checkMulti asserts what every NDR/PDR result must hold: goals in
// ascending order with non-decreasing rates (NDR ≤ PDR), every bound set
// by a full-duration trial, the short trials all before the final ones.
func checkMulti(t *testing.T, r *Result, o Options) {
	t.Helper()
	for i, g := range r.Goals {
		if i > 0 && (g.Goal <= r.Goals[i-1].Goal || g.RatePPS < r.Goals[i-1].RatePPS) {
			t.Errorf("goal %g at %.0f after goal %g at %.0f: want ascending goals, non-decreasing rates",
				g.Goal, g.RatePPS, r.Goals[i-1].Goal, r.Goals[i-1].RatePPS)
		}
		if g.Found && r.Trials[g.Trial-1].Duration != o.Duration {
			t.Errorf("goal %g: lower bound set by trial %d of %v, not a final one of %v", g.Goal, g.Trial, r.Trials[g.Trial-1].Duration, o.Duration)
		}
		if g.UpperPPS != 0 && r.Trials[g.UpperTrial-1].Duration != o.Duration {
			t.Errorf("goal %g: upper bound set by trial %d of %v, not a final one of %v", g.Goal, g.UpperTrial, r.Trials[g.UpperTrial-1].Duration, o.Duration)
		}
	}
	initial := o.InitialDuration
	if initial == 0 {
		initial = DefaultInitialDuration
	}
	final := false
	for _, tr := range r.Trials {
		switch {
		case tr.Phase == PhaseFinal && tr.Duration == o.Duration:
			final = true
		case final:
			t.Errorf("trial %d (%s, %v) after a final trial", tr.N, tr.Phase, tr.Duration)
		case (tr.Phase == PhaseInitial || tr.Phase == PhaseMax) && tr.Duration == initial:
		default:
			t.Errorf("trial %d: phase %s, %v", tr.N, tr.Phase, tr.Duration)
		}
	}
	if r.Trials[0].Phase != PhaseMax || r.Trials[0].RatePPS != r.MaxPPS {
		t.Errorf("first trial %s at %.0f: want %s at MaxPPS", r.Trials[0].Phase, r.Trials[0].RatePPS, PhaseMax)
	}
}

// countFinal counts the trials of the full duration.
func countFinal(r *Result) int {
	n := 0
	for _, tr := range r.Trials {
		if tr.Phase == PhaseFinal {
			n++
		}
	}
	return n
}

func TestNDRPDR(t *testing.T) {
	const max = lineRate64
	rng := rand.New(rand.NewPCG(3, 4))
	type truth struct{ low, high float64 }
	exact := func(rates ...float64) []truth {
		var ts []truth
		for _, r := range rates {
			ts = append(ts, truth{r, r})
		}
		return ts
	}
	tests := []struct {
		name    string
		dv      device
		opts    Options
		truths  []truth // per goal, ascending
		limited []bool  // per goal
		trials  int     // exact count when pinned
		final   int     // most final trials
	}{
		{name: "cliff", dv: device{loss: cliff(0.5 * max)}, truths: exact(0.5*max, 0.5*max/0.995), final: 2},
		{name: "cliff low", dv: device{loss: cliff(0.05 * max)}, truths: exact(0.05*max, 0.05*max/0.995), final: 2},
		{name: "cliff high", dv: device{loss: cliff(0.97 * max)}, truths: exact(0.97*max, 0.97*max/0.995), final: 2},
		{name: "cliff, absolute resolution 1000 pps", dv: device{loss: cliff(3_333_333)},
			opts: Options{Resolution: 1000}, truths: exact(3_333_333, 3_333_333/0.995), final: 4},
		{name: "noisy cliff", dv: device{loss: noisy(cliff(0.61*max), 0.001, rng)},
			truths: []truth{{0.61 * max, 0.61 * max}, {0.61 * max / 0.996, 0.61 * max / 0.995}}, final: 4},
		{name: "PDR knee", dv: device{loss: knee(0.4*max, 0.7*max)}, truths: exact(0.4*max, 0.7*max/0.997), final: 4},
		{name: "narrow PDR knee", dv: device{loss: knee(0.60*max, 0.605*max)}, truths: exact(0.6*max, 0.605*max/0.997), final: 4},
		{name: "short trials see more than long ones", dv: device{loss: buffered(0.45*max, 0.05*max)},
			truths: exact(0.45*max+0.05*max/60, (0.45*max+0.05*max/60)/0.995), final: 8},
		{name: "generator below the device", dv: device{loss: cliff(0.8 * max), gen: 0.3 * max},
			truths: exact(0.3*max, 0.3*max), limited: []bool{true, true}, trials: 4, final: 1},
		{name: "generator stalls once", dv: device{loss: knee(0.4*max, 0.7*max), stallAt: map[int]bool{2: true}},
			truths: exact(0.4*max, 0.7*max/0.997), limited: []bool{false, false}, final: 4},
		{name: "generator between NDR and PDR", dv: device{loss: knee(0.4*max, 0.7*max), gen: 0.55 * max},
			truths: exact(0.4*max, 0.55*max), limited: []bool{false, true}, final: 4},
		{name: "line rate", dv: device{loss: cliff(2 * max)}, truths: exact(max, max), trials: 2, final: 1},
		{name: "three goals, unsorted", dv: device{loss: knee(0.4*max, 0.7*max)},
			opts: Options{Goals: []float64{0.01, 0, 0.001}}, truths: exact(0.4*max, 0.4*max, 0.7*max/0.992), final: 4},
		{name: "one phase", dv: device{loss: knee(0.4*max, 0.7*max)},
			opts: Options{InitialDuration: time.Minute}, truths: exact(0.4*max, 0.7*max/0.997), final: 12},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dv := tc.dv
			o := tc.opts
			o.MaxPPS, o.Duration = max, time.Minute
			r, err := NDRPDR(context.Background(), o, dv.trial)
			if err != nil {
				t.Fatal(err)
			}
			checkRecorded(t, r, &dv)
			checkMulti(t, r, o)
			if len(r.Goals) != len(tc.truths) {
				t.Fatalf("%d goals, want %d", len(r.Goals), len(tc.truths))
			}
			for i, g := range r.Goals {
				checkTruthRange(t, r, g, tc.truths[i].low, tc.truths[i].high)
				limited := tc.limited != nil && tc.limited[i]
				if g.GeneratorLimited != limited {
					t.Errorf("goal %g: generator-limited %v, want %v (%s)", g.Goal, g.GeneratorLimited, limited, g.Note)
				}
			}
			if !r.Complete || r.GeneratorLimited != slices.Contains(tc.limited, true) {
				t.Errorf("complete %v, generator-limited %v", r.Complete, r.GeneratorLimited)
			}
			bound := ndrpdrBound(r)
			if r.TrialCount > bound {
				t.Errorf("%d trials: more than the bound %d", r.TrialCount, bound)
			}
			if tc.trials != 0 && r.TrialCount != tc.trials {
				t.Errorf("%d trials, want %d", r.TrialCount, tc.trials)
			}
			if n := countFinal(r); n > tc.final {
				t.Errorf("%d final trials, want at most %d", n, tc.final)
			}
			var got []string
			for _, g := range r.Goals {
				got = append(got, pps(g.RatePPS))
			}
			t.Logf("%d trials (%d final, bound %d): %s", r.TrialCount, countFinal(r), bound, strings.Join(got, ", "))
		})
	}
}

// ndrpdrBound is the most trials an NDR/PDR search may take on a device
// that does not depend on the duration: per goal, two binary searches'
// worth. The short trials may have to find a bound by steps that double
// before they bisect (at worst about twice a binary search), and the final
// trials only confirm, two per goal.
func ndrpdrBound(r *Result) int {
	return len(r.Goals) * 2 * binaryBound(r)
}
