package pktgen

import (
	"context"
	"errors"
	"testing"
	"time"
)

// WaitUntil returns at or after the instant, never before, and not long
// after it on an idle host; a zero or past instant returns at once; an
// ended context ends the wait with its error.
func TestWaitUntil(t *testing.T) {
	ctx := context.Background()
	for _, ahead := range []time.Duration{50 * time.Microsecond, SpinBefore, 2 * time.Millisecond, 20 * time.Millisecond} {
		at := time.Now().Add(ahead).Round(0) // the wall clock, as an instant from the wire
		if err := WaitUntil(ctx, at); err != nil {
			t.Fatal(err)
		}
		now := time.Now()
		if now.Before(at) {
			t.Errorf("%s ahead: returned %s before the instant", ahead, at.Sub(now))
		}
		if late := now.Sub(at); late > 50*time.Millisecond {
			t.Errorf("%s ahead: returned %s late", ahead, late)
		}
	}
	for _, at := range []time.Time{{}, time.Now().Add(-time.Hour)} {
		t0 := time.Now()
		if err := WaitUntil(ctx, at); err != nil {
			t.Fatal(err)
		}
		if d := time.Since(t0); d > 5*time.Millisecond {
			t.Errorf("instant %v: waited %s, want at once", at, d)
		}
	}
	cctx, cancel := context.WithTimeout(ctx, 10*time.Millisecond)
	defer cancel()
	t0 := time.Now()
	err := WaitUntil(cctx, time.Now().Add(time.Minute))
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(t0) > 5*time.Second {
		t.Errorf("ended context: %v after %s, want DeadlineExceeded soon", err, time.Since(t0))
	}
	// Cancelled during the spin as well.
	cctx, cancel = context.WithCancel(ctx)
	go func() { time.Sleep(SpinBefore / 3); cancel() }()
	if err := WaitUntil(cctx, time.Now().Add(SpinBefore/2+10*time.Second)); err == nil {
		t.Error("cancelled: no error")
	}
}
