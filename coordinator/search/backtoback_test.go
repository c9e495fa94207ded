package search

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// bufferDevice carries a burst of up to limit frames per flow and loses
// the excess of a longer one (a queue of limit frames that drains
// nothing during the burst); failAt lists bursts (1-based) that fail to
// run.
type bufferDevice struct {
	limit  uint64
	failAt map[int]bool
	sent   []uint64
}

func (d *bufferDevice) burst(_ context.Context, n uint64, _ string) (Outcome, error) {
	d.sent = append(d.sent, n)
	if d.failAt[len(d.sent)] {
		return Outcome{Err: errors.New("agent s1 went away")}, nil
	}
	got := min(n, d.limit)
	return Outcome{Sent: n, Received: got, Lost: n - got}, nil
}

// checkBurst checks a search's answer on a device of limit N: within the
// resolution below N (N itself at resolution 1), a lower bound at the
// longest burst searched, nothing found below the shortest, and every
// burst recorded as the device saw it.
func checkBurst(t *testing.T, o BurstOptions, limit uint64, r *BurstResult, d *bufferDevice) {
	t.Helper()
	lo, res := max(o.MinFrames, 1), max(o.Resolution, 1)
	switch {
	case limit >= o.MaxFrames:
		if !r.Found || r.Frames != o.MaxFrames || !r.AtMax || r.UpperFrames != 0 {
			t.Errorf("limit %d ≥ max %d: %+v, want %d frames, a lower bound", limit, o.MaxFrames, r, o.MaxFrames)
		}
	case limit < lo:
		if r.Found || r.Frames != 0 || r.UpperFrames != lo {
			t.Errorf("limit %d < min %d: %+v, want nothing found, lost at %d", limit, lo, r, lo)
		}
	default:
		if !r.Found || r.AtMax || r.Frames > limit || limit-r.Frames >= res || r.UpperFrames <= limit || r.UpperFrames-r.Frames > res {
			t.Errorf("limit %d, resolution %d: %+v", limit, res, r)
		}
		if res == 1 && r.Frames != limit {
			t.Errorf("limit %d at resolution 1: found %d", limit, r.Frames)
		}
	}
	if !r.Complete || len(r.Bursts) != len(d.sent) {
		t.Errorf("complete %v, %d bursts recorded, the device saw %d", r.Complete, len(r.Bursts), len(d.sent))
	}
	for i, b := range r.Bursts {
		if b.N != i+1 || b.Frames != d.sent[i] || b.Valid && b.Passed != (b.Frames <= limit) {
			t.Errorf("burst %d recorded as %+v, the device saw %d frames", i+1, b, d.sent[i])
		}
	}
}

// The search finds a device's limit exactly at resolution 1, from any
// hint or none, within its burst budget; at a coarser resolution within
// it; and says lower bound or nothing found at its ends.
func TestBackToBackFindsTheLimit(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 4))
	for range 3000 {
		o := BurstOptions{MaxFrames: 1 + rng.Uint64N(1<<uint(rng.IntN(30)))}
		if rng.IntN(3) == 0 {
			o.MinFrames = 1 + rng.Uint64N(o.MaxFrames)
		}
		if rng.IntN(3) == 0 {
			o.Resolution = 1 + rng.Uint64N(o.MaxFrames)
		}
		limit := rng.Uint64N(o.MaxFrames + 2) // some at or beyond the max, some below the min
		if rng.IntN(2) == 0 {
			o.Hint = rng.Uint64N(o.MaxFrames + 2)
			if rng.IntN(2) == 0 {
				o.Hint = limit // a steady device
			}
		}
		d := &bufferDevice{limit: limit}
		r, err := BackToBack(context.Background(), o, d.burst)
		if err != nil {
			t.Fatalf("%+v limit %d: %v", o, limit, err)
		}
		checkBurst(t, o, limit, r, d)
		// The documented bound: ceil(log2((max − min) / resolution)) + 2.
		span := float64(o.MaxFrames-max(o.MinFrames, 1)) / float64(max(o.Resolution, 1))
		bound := 2
		if span > 1 {
			bound += int(math.Ceil(math.Log2(span)))
		}
		if o.Hint > 0 {
			bound *= 2
		}
		if len(r.Bursts) > bound {
			t.Errorf("%+v limit %d: %d bursts, more than %d", o, limit, len(r.Bursts), bound)
		}
		if o.Hint == limit && limit > max(o.MinFrames, 1) && limit < o.MaxFrames && o.Resolution <= 1 && len(r.Bursts) != 2 {
			t.Errorf("%+v: a steady device took %d bursts from its own limit, want 2", o, len(r.Bursts))
		}
		if t.Failed() {
			t.Fatalf("options %+v limit %d: bursts %+v", o, limit, d.sent)
		}
	}
}

// The first burst is the longest searched: a path that carries it is
// measured in one burst.
func TestBackToBackUnlimitedPathOneBurst(t *testing.T) {
	d := &bufferDevice{limit: 1 << 62}
	r, err := BackToBack(context.Background(), BurstOptions{MaxFrames: 29_761_905}, d.burst)
	if err != nil || len(d.sent) != 1 || d.sent[0] != 29_761_905 || !r.AtMax || !strings.Contains(r.Note, "at least") {
		t.Fatalf("%v: bursts %v, %+v", err, d.sent, r)
	}
}

// A burst that fails to run is sent again; a second failure in a row
// stops the search with ErrTrialFailed and the best so far.
func TestBackToBackFailedBurst(t *testing.T) {
	d := &bufferDevice{limit: 700, failAt: map[int]bool{2: true}}
	o := BurstOptions{MaxFrames: 1000}
	r, err := BackToBack(context.Background(), o, d.burst)
	if err != nil || r.Frames != 700 || !r.Bursts[2].Retry || r.Bursts[1].Valid {
		t.Fatalf("one failure: %v %+v", err, r)
	}
	d = &bufferDevice{limit: 700, failAt: map[int]bool{2: true, 3: true}}
	r, err = BackToBack(context.Background(), o, d.burst)
	if !errors.Is(err, ErrTrialFailed) || r == nil || r.Complete || len(r.Bursts) != 3 || r.UpperFrames != 1000 {
		t.Fatalf("two failures: %v %+v", err, r)
	}
}

func TestBackToBackLimitsAndCancel(t *testing.T) {
	d := &bufferDevice{limit: 12345}
	r, err := BackToBack(context.Background(), BurstOptions{MaxFrames: 1 << 30, MaxBursts: 5}, d.burst)
	if !errors.Is(err, ErrTrialLimit) || len(r.Bursts) != 5 || r.Complete || r.Found {
		t.Errorf("max bursts: %v %+v", err, r)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if r, err := BackToBack(ctx, BurstOptions{MaxFrames: 10}, d.burst); !errors.Is(err, context.Canceled) || len(r.Bursts) != 0 {
		t.Errorf("cancelled: %v %+v", err, r)
	}
	for _, c := range []struct {
		o    BurstOptions
		fn   BurstFunc
		want string
	}{
		{BurstOptions{MaxFrames: 10}, nil, "BurstFunc is nil"},
		{BurstOptions{}, d.burst, "MaxFrames 0"},
		{BurstOptions{MaxFrames: 10, MinFrames: 11}, d.burst, "MinFrames 11: want at most MaxFrames 10"},
		{BurstOptions{MaxFrames: 10, MaxBursts: -1}, d.burst, "MaxBursts -1"},
	} {
		if _, err := BackToBack(context.Background(), c.o, c.fn); !errors.Is(err, ErrInvalidOptions) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.o, err, c.want)
		}
	}
}

// A device whose verdicts are not monotone (it carried a longer burst
// than one it lost frames of) still gets an answer below the shortest
// burst that lost.
func TestBackToBackNotMonotone(t *testing.T) {
	calls := 0
	fn := func(_ context.Context, n uint64, _ string) (Outcome, error) {
		calls++
		if calls == 3 { // one loss out of turn
			return Outcome{Sent: n, Received: n - 1, Lost: 1}, nil
		}
		got := min(n, 600)
		return Outcome{Sent: n, Received: got, Lost: n - got}, nil
	}
	r, err := BackToBack(context.Background(), BurstOptions{MaxFrames: 1000}, fn)
	if err != nil || !r.Found || r.Frames >= r.UpperFrames {
		t.Fatalf("%v %+v", err, r)
	}
}
