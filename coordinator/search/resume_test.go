package search

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"
)

// replayTrials answers the first trials from done (a search's record, in
// order) and the rest from fn, as a resumed campaign does.
func replayTrials(t *testing.T, done []Trial, fn TrialFunc) TrialFunc {
	return func(ctx context.Context, rate float64, d time.Duration, phase string) (Outcome, error) {
		if len(done) == 0 {
			return fn(ctx, rate, d, phase)
		}
		next := done[0]
		done = done[1:]
		if next.RatePPS != rate || next.Duration != d || next.Phase != phase {
			t.Fatalf("replay: stored trial %d is %s %.0f pps %v, the search asks for %s %.0f pps %v", next.N, next.Phase, next.RatePPS, next.Duration, phase, rate, d)
		}
		return next.Outcome, nil
	}
}

// TestResumeReachesTheSameAnswer interrupts each search after every k
// of its trials, then runs it again with those k trials replayed into it
// and the rest from the device: the answer and every trial are the
// uninterrupted search's, and the device sees only the trials after k.
func TestResumeReachesTheSameAnswer(t *testing.T) {
	const max = lineRate64
	devices := []struct {
		name string
		dv   device
	}{
		{"cliff", device{loss: cliff(0.5 * max)}},
		{"PDR knee", device{loss: knee(0.4*max, 0.7*max)}},
		{"short trials see more", device{loss: buffered(0.45*max, 0.05*max)}},
		{"generator-limited", device{loss: knee(0.4*max, 0.7*max), gen: 0.55 * max, shortfall: 0.97}},
		{"a trial fails to run", device{loss: cliff(0.6 * max), failAt: map[int]bool{3: true}}},
	}
	searches := []struct {
		name string
		run  func(context.Context, Options, TrialFunc) (*Result, error)
		opts Options
	}{
		{"rfc2544", RFC2544, Options{MaxPPS: max, Duration: 10 * time.Second}},
		{"ndr-pdr", NDRPDR, Options{MaxPPS: max, Duration: 10 * time.Second}},
	}
	for _, s := range searches {
		for _, dev := range devices {
			t.Run(s.name+"/"+dev.name, func(t *testing.T) {
				whole := dev.dv
				want, err := s.run(context.Background(), s.opts, whole.trial)
				if err != nil {
					t.Fatal(err)
				}
				for k := 1; k < want.TrialCount; k++ {
					// Interrupted: the k-th trial ends, then the context is cancelled.
					cut := dev.dv
					ctx, cancel := context.WithCancel(context.Background())
					stopAt := func(ctx context.Context, rate float64, d time.Duration, phase string) (Outcome, error) {
						o, err := cut.trial(ctx, rate, d, phase)
						if len(cut.calls) == k {
							cancel()
						}
						return o, err
					}
					part, err := s.run(ctx, s.opts, stopAt)
					cancel()
					if err == nil || part == nil || len(part.Trials) != k {
						t.Fatalf("k=%d: interrupted search: %v, %d trials", k, err, len(part.Trials))
					}
					// Resumed: the device goes on counting from trial k+1.
					rest := dev.dv
					rest.calls = slices.Clone(cut.calls)
					got, err := s.run(context.Background(), s.opts, replayTrials(t, part.Trials, rest.trial))
					if err != nil {
						t.Fatalf("k=%d: resumed: %v", k, err)
					}
					if ran := len(rest.calls) - k; ran != want.TrialCount-k {
						t.Errorf("k=%d: resumed search ran %d trials, want %d", k, ran, want.TrialCount-k)
					}
					if !reflect.DeepEqual(got, want) {
						t.Errorf("k=%d: resumed result differs:\n got %s\nwant %s", k, brief(got), brief(want))
					}
				}
			})
		}
	}
}

func brief(r *Result) string {
	s := fmt.Sprintf("%d trials, complete %v:", r.TrialCount, r.Complete)
	for _, g := range r.Goals {
		s += fmt.Sprintf(" goal %g: %.0f (trial %d)", g.Goal, g.RatePPS, g.Trial)
	}
	return s
}
