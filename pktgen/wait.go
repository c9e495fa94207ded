package pktgen

import (
	"context"
	"fmt"
	"time"
)

// SpinBefore is how long before a start instant WaitUntil stops sleeping
// and spins on the clock: more than a timer's usual overshoot on a busy
// host (tens to a few hundred µs), short enough not to burn a core for
// long.
const SpinBefore = 300 * time.Microsecond

// sleepSlice is the longest sleep between two looks at the context.
const sleepSlice = 10 * time.Millisecond

// WaitUntil returns at or just after the instant at (wall clock, as sent
// by a coordinator): it sleeps until SpinBefore ahead of it, then spins
// reading the clock. A zero or past instant returns at once. It returns
// ctx's error when ctx ends first. Every backend waits for its start with
// it, on the thread that sends (or writes pktgen's start), after
// everything is armed.
func WaitUntil(ctx context.Context, at time.Time) error {
	if at.IsZero() {
		return nil
	}
	at = at.Round(0) // the wall clock: the instant is the same on every host
	// Sleep in the kernel, in slices short enough to see ctx end.
	for d := time.Until(at) - SpinBefore; d > 0; d = time.Until(at) - SpinBefore {
		if ctx.Err() != nil {
			return fmt.Errorf("wait for the start at %s: %w", at.UTC().Format(time.RFC3339Nano), ctx.Err())
		}
		sleepFor(min(d, sleepSlice))
	}
	for n := 0; time.Now().Before(at); n++ {
		if n&1023 == 0 && ctx.Err() != nil {
			return fmt.Errorf("wait for the start at %s: %w", at.UTC().Format(time.RFC3339Nano), ctx.Err())
		}
	}
	return nil
}
