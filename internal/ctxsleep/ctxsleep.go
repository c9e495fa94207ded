// Package ctxsleep is the one sleep that a context ends early: the
// default of every injected Sleep hook (pktgen's Kernel, topology's
// Apply), which tests replace to run without waiting.
package ctxsleep

import (
	"context"
	"time"
)

// Sleep waits d, or until ctx is done: then it returns ctx.Err().
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
