package engine

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/linerate/linerate/internal/errjoin"
	"github.com/linerate/linerate/pktgen"
)

// Thread is one sender thread of a backend.
type Thread interface {
	// Send runs the send loop until c.Target packets were sent (0: no
	// target) or c.Stopped(). It runs on the thread's locked OS thread,
	// pinned to c.CPU.
	Send(c *Control) error
	// Progress returns the packets sent and errors so far; it is called
	// from other goroutines while Send runs.
	Progress() (sent, errors uint64)
	// Interrupt makes a Send in progress return soon; it is called from
	// another goroutine once c.Stopped() is true or the target is
	// reached, repeatedly until Send returns.
	Interrupt()
	// Close frees the thread's resources (after Send returned).
	Close() error
}

// Spanner is a Thread that knows when its first and last packets went
// (when that differs from when Send started and returned); the summary
// uses that window.
type Spanner interface {
	Span() (first, last time.Time, ok bool)
}

// Firster is a Thread that knows when its first frame went (the time it
// stamped into it), where Send's start is a little earlier; the summary's
// FirstFrameNs uses it. A Spanner's first is used before it.
type Firster interface {
	First() (time.Time, bool)
}

// Early is a Thread whose Send must begin a while before the start
// instant (its first call has a slow setup) and that holds its frames
// until the instant itself; the engine calls its Send Early() ahead.
type Early interface {
	Early() time.Duration
}

// Control is what a Thread's Send loop reads.
type Control struct {
	Index, CPU int
	Target     uint64 // packets to send; 0 = until stopped
	// PeriodNum/PeriodDen is the packet spacing in ns (PeriodNum 0:
	// as fast as possible).
	PeriodNum, PeriodDen uint64
	// sleepOnly is pktgen.Config.SleepPacing: Wait never spins.
	sleepOnly bool
	stop      *atomic.Bool
	stopCh    <-chan struct{}
	base      time.Time
}

// Stopped reports whether the run is being stopped (duration over,
// cancelled, or another thread failed).
func (c *Control) Stopped() bool { return c.stop.Load() }

// Now is nanoseconds since the run's clock started (monotonic).
func (c *Control) Now() int64 { return int64(time.Since(c.base)) }

// Wait waits about d (until c.Now() has advanced by d): spinning for
// short waits, which a timer would overshoot by up to a millisecond, and
// sleeping for long ones; sleeping only with sleepOnly. It returns early
// when the run is stopped.
func (c *Control) Wait(d time.Duration) {
	if d <= 0 {
		return
	}
	until := c.Now() + int64(d)
	spin := spinBelow
	if c.sleepOnly {
		spin = 0
	}
	if d > spin {
		t := time.NewTimer(d - spin)
		select {
		case <-t.C:
		case <-c.stopCh:
			t.Stop()
			return
		}
	}
	for c.Now() < until && !c.Stopped() {
	}
}

// spinBelow is the longest wait that spins, as pktgen's do; longer ones
// sleep, and the pacer's bucket absorbs the timer's overshoot.
const spinBelow = 100 * time.Microsecond

// Opener makes thread i's sender on its own locked, pinned OS thread
// (after ThreadInit), where sockets and namespaces are the thread's.
type Opener func(i, cpu int) (Thread, error)

// Options are one run.
type Options struct {
	Backend  pktgen.BackendName
	Config   *pktgen.Config
	Open     Opener
	Log      hclog.Logger
	Progress func(pktgen.Progress)
	// Interval between progress samples (default 200 ms).
	Interval time.Duration
	// ThreadInit, when set, runs first on every OS thread the run uses
	// (for example to enter a network namespace); those threads are
	// discarded after the run.
	ThreadInit func() error
	// Pin pins thread i to its CPU (default: unix sched_setaffinity);
	// tests replace it.
	Pin func(cpu int) error
}

type worker struct {
	ctl         Control
	th          Thread
	start, stop time.Time
	err         error
	done        chan struct{}
}

// Run opens every thread (all or none), starts them together at the
// config's StartAt (each thread waits for it with pktgen.WaitUntil on its
// own pinned OS thread, once every thread is open) and waits for them.
// On an error in one thread the others are stopped and the error is
// returned (with no summary). Cancelling ctx stops every thread and
// returns the summary marked Interrupted.
func Run(ctx context.Context, o Options) (*pktgen.Summary, error) {
	cfg := o.Config
	if o.Log == nil {
		o.Log = hclog.NewNullLogger()
	}
	if o.Interval <= 0 {
		o.Interval = 200 * time.Millisecond
	}
	if o.Pin == nil {
		o.Pin = pinToCPU
	}
	var stop atomic.Bool
	stopCh := make(chan struct{})
	var stopOnce sync.Once
	waitCtx, cancelWait := context.WithCancel(context.Background())
	stopAll := func() { stop.Store(true); stopOnce.Do(func() { close(stopCh); cancelWait() }) }
	defer stopAll()

	base := time.Now()
	n := len(cfg.CPUs)
	ws := make([]*worker, n)
	opened := make(chan error, n)
	startCh := make(chan struct{})
	for i, cpu := range cfg.CPUs {
		num, den := cfg.Period(i)
		w := &worker{done: make(chan struct{}), ctl: Control{
			Index: i, CPU: cpu, Target: cfg.CountOf(i), PeriodNum: num, PeriodDen: den, sleepOnly: cfg.SleepPacing,
			stop: &stop, stopCh: stopCh, base: base,
		}}
		ws[i] = w
		go w.run(o, opened, startCh, waitCtx)
	}
	var openErrs []error
	for range n {
		if err := <-opened; err != nil {
			openErrs = append(openErrs, err)
		}
	}
	if len(openErrs) > 0 {
		stopAll()
		close(startCh)
		for _, w := range ws {
			<-w.done
			if err := w.th.Close(); err != nil {
				o.Log.Warn("close sender thread", "thread", w.ctl.Index, "error", err)
			}
		}
		return nil, errjoin.Distinct(openErrs...)
	}
	o.Log.Info("sending", "backend", o.Backend, "dev", cfg.Device, "threads", n, "cpus", cfg.CPUs,
		"count_per_thread", cfg.CountOf(0), "duration", cfg.Duration)
	t0 := time.Now()
	if cfg.StartAt.After(t0) {
		t0 = cfg.StartAt
	}
	close(startCh)

	var deadline <-chan time.Time
	if cfg.Duration > 0 {
		t := time.NewTimer(time.Until(t0) + cfg.Duration)
		defer t.Stop()
		deadline = t.C
	}
	// The fast tick checks for reached targets and re-sends interrupts;
	// progress goes out every Interval.
	fast := time.NewTicker(5 * time.Millisecond)
	defer fast.Stop()
	lastProgress := time.Now()
	interrupted := false
	cancelled := ctx.Done()
	var failed error
	for {
		running := 0
		for _, w := range ws {
			select {
			case <-w.done:
				if w.err != nil && failed == nil {
					failed = w.err
					stopAll()
				}
			default:
				running++
				if stop.Load() {
					w.th.Interrupt()
				} else if sent, _ := w.th.Progress(); w.ctl.Target > 0 && sent >= w.ctl.Target {
					w.th.Interrupt()
				}
			}
		}
		if running == 0 {
			break
		}
		select {
		case <-cancelled:
			cancelled = nil
			interrupted = true
			o.Log.Info("stopping", "why", "cancelled")
			stopAll()
		case <-deadline:
			deadline = nil
			o.Log.Info("stopping", "why", "duration reached")
			stopAll()
		case <-fast.C:
			if o.Progress != nil && time.Since(lastProgress) >= o.Interval {
				lastProgress = time.Now()
				o.Progress(sample(ws, max(time.Since(t0), 0)))
			}
		}
	}
	for _, w := range ws {
		if err := w.th.Close(); err != nil {
			o.Log.Warn("close sender thread", "thread", w.ctl.Index, "error", err)
		}
	}
	if failed != nil {
		return nil, failed
	}
	sum := &pktgen.Summary{Backend: string(o.Backend), Device: cfg.Device, Interrupted: interrupted}
	var first, last time.Time
	for i, w := range ws {
		firstFrame := w.start
		if f, ok := w.th.(Firster); ok {
			if t, ok := f.First(); ok {
				firstFrame = t
			}
		}
		if sp, ok := w.th.(Spanner); ok {
			if first, last, ok := sp.Span(); ok {
				w.start, w.stop, firstFrame = first, last, first
			}
		}
		sent, errs := w.th.Progress()
		t := pktgen.ThreadSummary{CPU: w.ctl.CPU, Entry: cfg.ThreadEntry(i), Packets: sent, Errors: errs,
			USec: uint64(w.stop.Sub(w.start).Microseconds())}
		if sent > 0 && !firstFrame.IsZero() {
			t.FirstFrameNs = uint64(firstFrame.UnixNano())
		}
		t.PPS = pktgen.Rate(t.Packets, t.USec)
		if cfg.SrcPerThread {
			t.Src = cfg.ThreadSource(i).String()
		}
		sum.Threads = append(sum.Threads, t)
		if first.IsZero() || w.start.Before(first) {
			first = w.start
		}
		if w.stop.After(last) {
			last = w.stop
		}
	}
	sum.USec = uint64(last.Sub(first).Microseconds())
	sum.Finish(cfg.FrameBytes())
	return sum, nil
}

func (w *worker) run(o Options, opened chan<- error, startCh <-chan struct{}, waitCtx context.Context) {
	defer close(w.done)
	// The OS thread stays locked until the goroutine ends, so that the
	// runtime discards it with its CPU affinity and namespace.
	lockThread()
	open := func() error {
		if o.ThreadInit != nil {
			if err := o.ThreadInit(); err != nil {
				return fmt.Errorf("thread %d: init: %w", w.ctl.Index, err)
			}
		}
		if err := o.Pin(w.ctl.CPU); err != nil {
			return fmt.Errorf("thread %d: pin to cpu %d: %w", w.ctl.Index, w.ctl.CPU, err)
		}
		th, err := o.Open(w.ctl.Index, w.ctl.CPU)
		if err != nil {
			return fmt.Errorf("thread %d (cpu %d): %w", w.ctl.Index, w.ctl.CPU, err)
		}
		w.th = th
		return nil
	}
	err := open()
	opened <- err
	<-startCh
	if err != nil || w.ctl.Stopped() {
		if w.th == nil {
			w.th = noThread{}
		}
		return
	}
	// Armed: wait for the instant here, on the pinned thread that sends
	// (a thread that holds its frames itself, a while before it).
	at := o.Config.StartAt
	if e, ok := w.th.(Early); ok && !at.IsZero() {
		at = at.Add(-e.Early())
	}
	if pktgen.WaitUntil(waitCtx, at) != nil {
		return // stopped before the start
	}
	w.start = time.Now()
	if err := w.th.Send(&w.ctl); err != nil {
		w.err = fmt.Errorf("thread %d (cpu %d): %w", w.ctl.Index, w.ctl.CPU, err)
	}
	w.stop = time.Now()
}

func sample(ws []*worker, elapsed time.Duration) pktgen.Progress {
	p := pktgen.Progress{Elapsed: elapsed}
	for _, w := range ws {
		sent, errs := w.th.Progress()
		p.Threads = append(p.Threads, pktgen.ThreadProgress{CPU: w.ctl.CPU, Packets: sent, Errors: errs})
		p.Packets += sent
		p.Errors += errs
	}
	return p
}

type noThread struct{}

func (noThread) Send(*Control) error        { return nil }
func (noThread) Progress() (uint64, uint64) { return 0, 0 }
func (noThread) Interrupt()                 {}
func (noThread) Close() error               { return nil }

// OnThread runs fn on a fresh locked OS thread after init (for example
// entering a network namespace); with no init it runs fn here. A thread
// that ran init is discarded afterwards.
func OnThread(init func() error, fn func() error) error {
	if init == nil {
		return fn()
	}
	errc := make(chan error, 1)
	go func() {
		lockThread() // never unlocked: the runtime discards the thread
		if err := init(); err != nil {
			errc <- fmt.Errorf("thread init: %w", err)
			return
		}
		errc <- fn()
	}()
	return <-errc
}
