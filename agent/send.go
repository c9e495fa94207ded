package agent

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/linerate/linerate/pktgen"
)

// maxStartAhead is how far in the future a send's start instant may be.
const maxStartAhead = time.Minute

// sendRun is one sender run, from Configure to its summary.
type sendRun struct {
	cfg      pktgen.Config
	backend  pktgen.Backend
	phase    phase
	ctx      context.Context // the run's, from schedule: ends with Stop or shutdown
	cancel   context.CancelFunc
	done     chan struct{} // closed when the run ends
	started  time.Time
	stopped  time.Time
	progress pktgen.Progress
	summary  *pktgen.Summary
	err      error
	// aborted is why the run was ended before its instant by the
	// caller's going (the run then failed with it)
	aborted error
	// overrun is why the watchdog stopped the run (it then failed with
	// it): it ran past its deadline
	overrun error
	// what the metrics counted of this run so far
	countedPackets, countedErrors uint64
	// what the device's tx_dropped grew by over the run (txDroppedOK:
	// read at both ends)
	txDropped   uint64
	txDroppedOK bool
	// where the NIC's queue IRQs fired over the run
	irqs irqCheck
	// rtt runs the round trips beside the load (nil: none asked), rttOut
	// is what they gave once the load ended
	rtt    *rttProbe
	rttOut *rttOutcome
}

// sending is the sender's lifecycle: configured, scheduled for an instant,
// running, done or failed; stopped on request; its result with the frames
// the host dropped (the device's tx_dropped over the run).
type sending struct {
	base    context.Context // ends every send at shutdown
	netOS   netOS
	thread  nsThread
	log     hclog.Logger
	metrics *metrics
	changes *changes
	irqs    *irqVerifier
	// watchdog times every send (zero: the defaults)
	watchdog watchdogTimes

	mu  sync.Mutex
	run *sendRun
	// lingering is a run whose backend was given up (watchdog.go) and has
	// not returned yet: no send starts until it has, so that its late end
	// (kernel pktgen's reset) cannot cut the next one short.
	lingering *sendRun
}

// sendResult is a finished run's outcome.
type sendResult struct {
	summary          *pktgen.Summary
	started, stopped time.Time
	// txDropped is what the device's tx_dropped grew by (txDroppedOK:
	// it was read at both ends).
	txDropped   uint64
	txDroppedOK bool
	irqs        irqCheck
	rtt         *rttOutcome // the round trips (nil: none asked)
}

// senderState is the sender as a watch sample shows it.
type senderState struct {
	phase phase
	// progress is what the run sent so far (its summary once it ended);
	// started tells whether it has started at all.
	progress   pktgen.Progress
	started    bool
	frameBytes float64
	err        error
}

// checkStartAt refuses a start instant too far ahead.
func checkStartAt(at time.Time) error {
	if time.Until(at) > maxStartAhead {
		return failf(ErrInvalid, "at %s: more than %s ahead", at.UTC().Format(time.RFC3339Nano), maxStartAhead)
	}
	return nil
}

// idle refuses while a send is scheduled or running.
func (s *sending) idle() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.idleLocked()
}

// idleLocked is idle; callers hold s.mu.
func (s *sending) idleLocked() error {
	if r := s.run; r != nil && r.phase.sending() {
		return failf(ErrBusy, "configure: a send is running (Stop it first)")
	}
	if r := s.lingering; r != nil {
		return failf(ErrBusy, "configure: the %s backend of the send given up %s ago has not returned yet: no send until it has",
			r.backend.Name(), time.Since(r.stopped).Round(time.Second))
	}
	return nil
}

// configure makes cfg, sent by be, the next run, unless a send is under
// way.
func (s *sending) configure(cfg pktgen.Config, be pktgen.Backend, rtt *rttProbe) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.idleLocked(); err != nil {
		return err
	}
	s.run = &sendRun{cfg: cfg, backend: be, phase: phaseConfigured, rtt: rtt}
	s.changes.notify()
	return nil
}

// schedule takes the configured run to scheduled: it is started by run.
func (s *sending) schedule() (*sendRun, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.run
	if r == nil || r.phase != phaseConfigured {
		return nil, failf(ErrNotReady, "start: no configured run (Configure first; a finished run needs Configure again)")
	}
	r.ctx, r.cancel = context.WithCancel(s.base)
	r.phase, r.done = phaseScheduled, make(chan struct{})
	s.metrics.runsStarted.WithLabelValues(runSender).Inc()
	s.changes.notify()
	return r, nil
}

// start runs the scheduled run r from the instant at (ctx is the caller's:
// when it ends before the instant, the run fails). The backend is handed
// the run at once, with the instant as its StartAt: it arms (devices,
// sockets, frames, programs) and waits for the instant itself, on the
// threads that send. start returns at the instant (a plain timer: the
// precise wait is the backend's, and a spin here would take a core from
// it); a backend that fails while arming fails the start. The run goes on
// until it ends or is stopped.
func (s *sending) start(ctx context.Context, r *sendRun, at time.Time) (time.Time, error) {
	runCtx := r.ctx
	// The device's tx_dropped now, before the backend is armed.
	var tx0 uint64
	tx0Err := s.thread.do(func() (err error) { tx0, err = s.netOS.txDropped(r.cfg.Device); return err })
	// The queue IRQs' counts now, and again once the backend returned.
	irqs := s.irqs.begin(r.cfg.Device)
	cfg := r.cfg
	cfg.StartAt = at
	if r.rtt != nil {
		if err := r.rtt.begin(runCtx, at); err != nil {
			s.finish(r, nil, err)
			return time.Time{}, failf(ErrHost, "start: %v", err)
		}
	}
	ran := make(chan ranSend, 1) // buffered: a backend given up on never blocks on it
	go func() {
		sum, err := r.backend.Run(runCtx, cfg, func(p pktgen.Progress) {
			p.Threads = append([]pktgen.ThreadProgress(nil), p.Threads...) // the backend may reuse it
			s.mu.Lock()
			if r.stopped.IsZero() { // not after a watchdog gave the run up
				r.progress = p
				s.metrics.countSent(r, p.Packets, p.Errors)
			}
			s.mu.Unlock()
		})
		// Frames the host dropped after the backend counted them, on
		// record before finish lets Result answer.
		var tx1 uint64
		tx1Err := s.thread.do(func() (err error) { tx1, err = s.netOS.txDropped(r.cfg.Device); return err })
		var rtt *rttOutcome
		if r.rtt != nil {
			o := r.rtt.end()
			rtt = &o
		}
		ran <- ranSend{sum: sum, err: err, irqs: s.irqs.end(irqs), tx1: tx1, txErr: errors.Join(tx0Err, tx1Err), rtt: rtt}
	}()
	go s.supervise(r, at, ran, func(o ranSend) {
		s.mu.Lock()
		defer s.mu.Unlock()
		r.irqs, r.rttOut = o.irqs, o.rtt
		if o.rtt != nil && o.rtt.err != nil {
			s.log.Warn("round trips failed: the load's result stands", "error", o.rtt.err)
		}
		if o.txErr != nil {
			s.log.Warn("tx_dropped of the device not read: the sender host's drops are unknown", "device", r.cfg.Device, "error", o.txErr)
		} else {
			r.txDropped, r.txDroppedOK = o.tx1-min(tx0, o.tx1), true
		}
	})
	if err := s.awaitInstant(ctx, r, at); err != nil {
		return time.Time{}, err
	}
	s.mu.Lock()
	if r.phase == phaseScheduled {
		r.phase = phaseRunning
	}
	r.started = time.Now()
	started := r.started
	s.changes.notify()
	s.mu.Unlock()
	return started, nil
}

// awaitInstant waits for at while r's backend arms: the caller's going
// ends the run as failed (ErrCanceled), a stop before the instant aborts
// it (ErrAborted), a backend that fails while arming fails the start
// (ErrFailed). A backend that ended by itself before the instant (one
// that does not wait for StartAt) is let be: the instant is still kept.
func (s *sending) awaitInstant(ctx context.Context, r *sendRun, at time.Time) error {
	wait := time.Until(at)
	if wait <= 0 {
		return nil
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	done := r.done
	for {
		select {
		case <-t.C:
			return nil
		case <-ctx.Done():
			s.mu.Lock()
			r.aborted = ctx.Err()
			cancel := r.cancel
			s.mu.Unlock()
			cancel()
			<-r.done
			return failf(ErrCanceled, "start: the call ended before %s", at)
		case <-done:
			done = nil
			s.mu.Lock()
			err, sum := r.err, r.summary
			s.mu.Unlock()
			switch {
			case err != nil:
				return failf(ErrFailed, "start: the send failed before the start instant: %v", err)
			case sum == nil || sum.Interrupted:
				return failf(ErrAborted, "start: stopped before the start instant")
			}
		}
	}
}

// finish records the end of run r.
func (s *sending) finish(r *sendRun, sum *pktgen.Summary, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r.aborted != nil {
		sum, err = nil, r.aborted
	}
	if r.overrun != nil && err == nil {
		err = r.overrun // the summary is kept: Watch shows what it sent
	}
	r.stopped, r.summary, r.err = time.Now(), sum, err
	if sum != nil {
		s.metrics.countSent(r, sum.Packets, sum.Errors)
	}
	s.metrics.runEnded(runSender, err)
	if err != nil {
		r.phase = phaseFailed
		s.log.Error("send failed", "error", err)
	} else {
		r.phase = phaseDone
		if sum != nil {
			s.log.Info("send done", "packets", sum.Packets, "errors", sum.Errors, "pps", sum.PPS)
		}
	}
	r.cancel()
	close(r.done)
	s.changes.notify()
}

// started is the run that was started (nil when none was).
func (s *sending) started() *sendRun {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r := s.run; r != nil && r.done != nil {
		return r
	}
	return nil
}

// stop ends run r (nil: none started) and waits for it to end; stopped is
// false when it had ended already.
func (s *sending) stop(ctx context.Context, r *sendRun) (stopped bool, at time.Time, err error) {
	if r == nil {
		return false, time.Time{}, nil
	}
	select {
	case <-r.done:
		return false, time.Time{}, nil
	default:
	}
	s.mu.Lock()
	cancel := r.cancel
	s.mu.Unlock()
	cancel()
	select {
	case <-r.done:
	case <-ctx.Done():
		return false, time.Time{}, ctx.Err()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return true, r.stopped, nil
}

// result is the outcome of run r (nil: none started), waiting for it to
// end with wait, refusing a run still going without.
func (s *sending) result(ctx context.Context, r *sendRun, wait bool) (*sendResult, error) {
	if r == nil {
		return nil, failf(ErrNotReady, "result: no run started (Configure and Start first)")
	}
	if wait {
		select {
		case <-r.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	} else {
		select {
		case <-r.done:
		default:
			return nil, failf(ErrNotReady, "result: the run is still going (wait, or Stop it)")
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if r.err != nil {
		return nil, failf(ErrFailed, "result: the run failed: %w", r.err)
	}
	return &sendResult{summary: r.summary, started: r.started, stopped: r.stopped, txDropped: r.txDropped, txDroppedOK: r.txDroppedOK, irqs: r.irqs, rtt: r.rttOut}, nil
}

// end stops a started run, waits for it within ctx, and forgets the run.
func (s *sending) end(ctx context.Context) error {
	s.mu.Lock()
	r := s.run
	var cancel context.CancelFunc
	var done chan struct{}
	if r != nil {
		cancel, done = r.cancel, r.done
	}
	s.mu.Unlock()
	var err error
	if done != nil {
		cancel()
		select {
		case <-done:
		case <-ctx.Done():
			err = fmt.Errorf("stop the send: %w", ctx.Err())
		}
	}
	s.mu.Lock()
	if s.run == r {
		s.run = nil
	}
	s.mu.Unlock()
	return err
}

// state is the sender now.
func (s *sending) state() senderState {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := senderState{phase: phaseIdle}
	r := s.run
	if r == nil {
		return st
	}
	p := r.progress
	if r.summary != nil {
		p = pktgen.Progress{Elapsed: time.Duration(r.summary.USec) * time.Microsecond, Packets: r.summary.Packets, Errors: r.summary.Errors}
		for _, t := range r.summary.Threads {
			p.Threads = append(p.Threads, pktgen.ThreadProgress{CPU: t.CPU, Entry: t.Entry, Packets: t.Packets, Errors: t.Errors})
		}
	}
	return senderState{phase: r.phase, progress: p, started: !r.started.IsZero(), frameBytes: r.cfg.FrameBytes(), err: r.err}
}
