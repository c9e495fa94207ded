package engine

import (
	"context"
	"errors"
	"net/netip"
	"sync/atomic"
	"testing"
	"time"

	"github.com/linerate/linerate/pktgen"
)

// fake sends one packet per loop, pausing pause between packets.
type fake struct {
	pause       time.Duration
	sent, errs  atomic.Uint64
	interrupted atomic.Int32
	closed      *atomic.Int32
	fail        error
}

func (f *fake) Send(c *Control) error {
	for !c.Stopped() {
		if c.Target > 0 && f.sent.Load() >= c.Target {
			return nil
		}
		if f.fail != nil && f.sent.Load() == 3 {
			return f.fail
		}
		f.sent.Add(1)
		if f.pause > 0 {
			c.Wait(f.pause)
		}
	}
	return nil
}
func (f *fake) Progress() (uint64, uint64) { return f.sent.Load(), f.errs.Load() }
func (f *fake) Interrupt()                 { f.interrupted.Add(1) }
func (f *fake) Close() error               { f.closed.Add(1); return nil }

func cfg(cpus ...int) *pktgen.Config {
	return &pktgen.Config{Device: "veth0", CPUs: cpus, PktSize: 60, DstMin: netip.MustParseAddr("198.18.0.2"),
		SrcMin: netip.MustParseAddr("198.18.0.1"), SrcPerThread: true}
}

func opts(c *pktgen.Config, closed *atomic.Int32, mk func(i int) (*fake, error)) Options {
	return Options{Backend: "fake", Config: c, Pin: func(int) error { return nil },
		Open: func(i, cpu int) (Thread, error) {
			f, err := mk(i)
			if err != nil {
				return nil, err
			}
			f.closed = closed
			return f, nil
		}}
}

func TestRunCounts(t *testing.T) {
	c := cfg(0, 1, 2)
	c.Counts = []uint64{5, 6, 7}
	var closed atomic.Int32
	sum, err := Run(context.Background(), opts(c, &closed, func(int) (*fake, error) { return &fake{}, nil }))
	if err != nil {
		t.Fatal(err)
	}
	if sum.Packets != 18 || sum.Backend != "fake" || sum.Interrupted || closed.Load() != 3 {
		t.Fatalf("summary %+v, %d closed", sum, closed.Load())
	}
	for i, th := range sum.Threads {
		if th.Packets != c.Counts[i] || th.Src != c.ThreadSource(i).String() || th.Entry != c.ThreadEntry(i) || th.CPU != i {
			t.Errorf("thread %d: %+v", i, th)
		}
	}
}

func TestRunDurationAndProgress(t *testing.T) {
	c := cfg(0)
	c.Duration = 250 * time.Millisecond
	var closed atomic.Int32
	o := opts(c, &closed, func(int) (*fake, error) { return &fake{pause: 50 * time.Microsecond}, nil })
	o.Interval = 50 * time.Millisecond
	samples := 0
	o.Progress = func(p pktgen.Progress) { samples++ }
	start := time.Now()
	sum, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < 250*time.Millisecond || took > time.Second || sum.Interrupted || samples < 2 {
		t.Errorf("250 ms run took %v, interrupted %v, %d samples", took, sum.Interrupted, samples)
	}
}

func TestRunCancelInterrupts(t *testing.T) {
	c := cfg(0, 1)
	var closed atomic.Int32
	o := opts(c, &closed, func(int) (*fake, error) { return &fake{pause: time.Millisecond}, nil })
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	sum, err := Run(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if !sum.Interrupted || sum.Packets == 0 {
		t.Errorf("cancelled run: %+v", sum)
	}
}

func TestRunOpenFailureClosesTheOthers(t *testing.T) {
	c := cfg(0, 1, 2)
	c.Count = 100
	var closed atomic.Int32
	boom := errors.New("boom")
	_, err := Run(context.Background(), opts(c, &closed, func(i int) (*fake, error) {
		if i == 1 {
			return nil, boom
		}
		return &fake{}, nil
	}))
	if !errors.Is(err, boom) || closed.Load() != 2 {
		t.Errorf("open failure: %v, %d closed (want the 2 opened)", err, closed.Load())
	}
}

func TestRunSendFailureStopsAll(t *testing.T) {
	c := cfg(0, 1)
	var closed atomic.Int32
	boom := errors.New("socket gone")
	_, err := Run(context.Background(), opts(c, &closed, func(i int) (*fake, error) {
		f := &fake{pause: 100 * time.Microsecond}
		if i == 0 {
			f.fail = boom
		}
		return f, nil
	}))
	if !errors.Is(err, boom) || closed.Load() != 2 {
		t.Errorf("send failure: %v, %d closed", err, closed.Load())
	}
}

// Threads open first and send from the config's StartAt: no thread's
// first frame is before it; a run cancelled before the instant sends
// nothing.
func TestRunStartsAtInstant(t *testing.T) {
	c := cfg(0, 1)
	c.Count = 10
	c.StartAt = time.Now().Add(30 * time.Millisecond).Round(0)
	var closed atomic.Int32
	sum, err := Run(context.Background(), opts(c, &closed, func(int) (*fake, error) { return &fake{}, nil }))
	if err != nil {
		t.Fatal(err)
	}
	for i, th := range sum.Threads {
		if first := time.Unix(0, int64(th.FirstFrameNs)); first.Before(c.StartAt) || first.After(c.StartAt.Add(time.Second)) {
			t.Errorf("thread %d: first frame %s, want at or just after the instant %s", i, first, c.StartAt)
		}
	}
	c.StartAt = time.Now().Add(time.Minute)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	sum, err = Run(ctx, opts(c, &closed, func(int) (*fake, error) { return &fake{}, nil }))
	if err != nil || !sum.Interrupted || sum.Packets != 0 {
		t.Errorf("cancelled before the instant: %+v %v, want nothing sent, interrupted", sum, err)
	}
}
