package agent

import (
	"context"
	"sync"
	"time"
)

// defaultWatchInterval is the Watch interval when the request gives none.
const defaultWatchInterval = time.Second

// minWatchInterval is the shortest Watch interval.
const minWatchInterval = 200 * time.Millisecond

// changes wakes the watchers when a phase changes.
type changes struct {
	mu sync.Mutex
	ch chan struct{}
}

func newChanges() *changes { return &changes{ch: make(chan struct{})} }

// notify wakes everyone waiting on next.
func (c *changes) notify() {
	c.mu.Lock()
	defer c.mu.Unlock()
	close(c.ch)
	c.ch = make(chan struct{})
}

// next is closed at the next notify.
func (c *changes) next() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ch
}

// sample is the live state of the agent's sender and receiver (nil: the
// agent's role has none).
type sample struct {
	at       time.Time
	sender   *senderState
	receiver *receiverState
}

// watcher samples the sender and the receiver.
type watcher struct {
	changes *changes
	base    context.Context // ends at shutdown
	// sender and receiver read the states (nil: the role has none).
	sender   func() senderState
	receiver func() receiverState
}

// sample reads the states now.
func (w *watcher) sample() sample {
	s := sample{at: time.Now()}
	if w.sender != nil {
		st := w.sender()
		s.sender = &st
	}
	if w.receiver != nil {
		st := w.receiver()
		s.receiver = &st
	}
	return s
}

// watch calls emit with a sample now, every interval (nil: a second; at
// least minWatchInterval) and at every phase change, until ctx ends (nil),
// the agent shuts down (ErrShuttingDown) or emit fails (its error).
func (w *watcher) watch(ctx context.Context, interval *time.Duration, emit func(sample) error) error {
	every := defaultWatchInterval
	if interval != nil {
		every = *interval
	}
	t := time.NewTicker(max(every, minWatchInterval))
	defer t.Stop()
	for {
		changed := w.changes.next() // before sampling: a change after it wakes us
		if err := emit(w.sample()); err != nil {
			return err
		}
		select {
		case <-t.C:
		case <-changed:
		case <-ctx.Done():
			return nil
		case <-w.base.Done():
			return failf(ErrShuttingDown, "the agent is shutting down")
		}
	}
}
