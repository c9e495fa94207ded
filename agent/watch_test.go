package agent

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestWatcher(t *testing.T) {
	base, shutdown := context.WithCancel(context.Background())
	defer shutdown()
	ch := newChanges()
	ph := phaseIdle
	w := &watcher{changes: ch, base: base, sender: func() senderState { return senderState{phase: ph} }}
	samples := make(chan sample, 8)
	done := make(chan error, 1)
	long := time.Hour
	go func() {
		done <- w.watch(context.Background(), &long, func(s sample) error { samples <- s; return nil })
	}()
	next := func(what string) sample {
		t.Helper()
		select {
		case s := <-samples:
			return s
		case <-time.After(3 * time.Second):
			t.Fatalf("%s: no sample", what)
		}
		return sample{}
	}
	if s := next("first"); s.sender == nil || s.sender.phase != phaseIdle || s.receiver != nil {
		t.Errorf("first sample: %+v", s)
	}
	// A phase change is sent at once, not at the next interval. (The
	// watcher samples after taking the change channel: no change is lost.)
	time.Sleep(20 * time.Millisecond)
	ph = phaseConfigured
	ch.notify()
	if s := next("after a change"); s.sender.phase != phaseConfigured {
		t.Errorf("after a change: %+v", s)
	}
	shutdown()
	if err := <-done; !errors.Is(err, ErrShuttingDown) {
		t.Errorf("at shutdown: %v, want ErrShuttingDown", err)
	}

	// The caller going ends it without an error; emit's error ends it with
	// that error.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	w.base = context.Background()
	if err := w.watch(ctx, nil, func(sample) error { return nil }); err != nil {
		t.Errorf("caller gone: %v", err)
	}
	gone := errors.New("stream broken")
	if err := w.watch(context.Background(), nil, func(sample) error { return gone }); err != gone {
		t.Errorf("emit fails: %v", err)
	}
}

// A short interval is raised to minWatchInterval.
func TestWatcherInterval(t *testing.T) {
	w := &watcher{changes: newChanges(), base: context.Background()}
	ctx, cancel := context.WithTimeout(context.Background(), 3*minWatchInterval+minWatchInterval/2)
	defer cancel()
	tiny, n := time.Millisecond, 0
	_ = w.watch(ctx, &tiny, func(sample) error { n++; return nil })
	if n < 3 || n > 5 {
		t.Errorf("%d samples in 3.5 minimal intervals, want about 4", n)
	}
}
