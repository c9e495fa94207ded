package agent

import (
	"context"
	"fmt"
)

// tuneGate serialises the agent's tuning and restoring (one at a time,
// whoever asks: an RPC or a lease's cleanup) and remembers which lease
// generation made the tuning in place, so the late cleanup of an older
// lease never restores what a later lease tuned.
type tuneGate struct {
	slot chan struct{} // holds one token while a tune or restore runs
	gen  uint64        // under slot: the generation of the last Tune (0: none since a restore)
}

func newTuneGate() *tuneGate { return &tuneGate{slot: make(chan struct{}, 1)} }

// lock waits, within ctx, for the gate.
func (g *tuneGate) lock(ctx context.Context, what string) error {
	select {
	case g.slot <- struct{}{}:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("%s: waiting for the tune or restore under way: %w", what, ctx.Err())
	}
}

func (g *tuneGate) unlock() { <-g.slot }

// tune runs fn, the Tune of lease generation gen, alone.
func (g *tuneGate) tune(ctx context.Context, gen uint64, fn func() error) error {
	if err := g.lock(ctx, "tune"); err != nil {
		return err
	}
	defer g.unlock()
	g.gen = gen // even a failed tune may have left a journal behind
	return fn()
}

// restore runs fn, a restore on behalf of lease generation gen, alone —
// unless a later generation tuned the host meanwhile (skipped: that
// tuning is the later lease's to restore).
func (g *tuneGate) restore(ctx context.Context, gen uint64, fn func() error) (skipped bool, err error) {
	if err := g.lock(ctx, "restore"); err != nil {
		return false, err
	}
	defer g.unlock()
	if g.gen > gen {
		return true, nil
	}
	err = fn()
	g.gen = 0
	return false, err
}
