package agent

import (
	"errors"
	"fmt"
	"time"

	"github.com/linerate/linerate/pktgen"
)

// Watchdog defaults.
const (
	// defaultStopGrace is how long a stopped backend has to return before
	// the watchdog gives it up (pktgen's stop is repeated every 250 ms and
	// its results read within a second).
	defaultStopGrace = 10 * time.Second
)

// ErrOverrun is a send the watchdog stopped: it ran past its deadline.
var ErrOverrun = errors.New("stopped by the watchdog")

// watchdogTimes are the watchdog's: the fixed part of every deadline's
// margin (pktgen.Config.Deadline), and how long a stopped backend has to
// return. Zero: the defaults. deadline, when set, replaces
// pktgen.Config.Deadline (tests: a real send stopped in its midst).
type watchdogTimes struct {
	margin, grace time.Duration
	deadline      func(*pktgen.Config) pktgen.Deadline
}

// ranSend is what a backend's Run returned, with the device's counters
// read after it.
type ranSend struct {
	sum   *pktgen.Summary
	err   error
	irqs  irqCheck
	tx1   uint64
	txErr error       // tx_dropped not read at one end
	rtt   *rttOutcome // the round trips, when asked
}

// resetter is a backend that can put the host back as the end of a run
// leaves it although its Run has not returned (the kernel's pktgen:
// every thread stopped, every device detached).
type resetter interface{ Reset() error }

// supervise waits for run r's backend (ran) and records its end (record,
// then finish). It is the send's watchdog: at the run's deadline from
// the instant at (pktgen.Config.Deadline) a send still running is stopped
// as Stop stops it and fails with ErrOverrun, its reason in the message.
// A backend that has not returned grace after it was stopped (by the
// watchdog, Stop, the end of the lease or shutdown) is given up: a
// resetter is reset, the run fails, and waiters (Result, Stop, the end
// of a lease) go on; its late return is dropped.
func (s *sending) supervise(r *sendRun, at time.Time, ran <-chan ranSend, record func(ranSend)) {
	dl := r.cfg.Deadline(s.watchdog.margin)
	if s.watchdog.deadline != nil {
		dl = s.watchdog.deadline(&r.cfg)
	}
	grace := s.watchdog.grace
	if grace <= 0 {
		grace = defaultStopGrace
	}
	from := at
	if now := time.Now(); now.After(at) {
		from = now
	}
	deadline := time.NewTimer(time.Until(from.Add(dl.Limit)))
	defer deadline.Stop()
	stopped := r.ctx.Done()
	var giveUp <-chan time.Time
	for {
		select {
		case o := <-ran:
			record(o)
			s.finish(r, o.sum, o.err)
			return
		case <-deadline.C:
			err := fmt.Errorf("%w: the send was still running %s after its start, past its deadline (%s expected: %s)",
				ErrOverrun, dl.Limit.Round(time.Millisecond), dl.Expected.Round(time.Millisecond), dl.Basis)
			s.log.Error("send overran its deadline: stopping it", "deadline", dl.Limit, "expected", dl.Expected, "basis", dl.Basis)
			s.mu.Lock()
			r.overrun = err
			s.mu.Unlock()
			r.cancel()
		case <-stopped:
			stopped = nil
			t := time.NewTimer(grace)
			defer t.Stop()
			giveUp = t.C
		case <-giveUp:
			err := s.giveUp(r, grace)
			s.linger(r, ran) // before finish lets a waiter configure the next send
			s.finish(r, nil, err)
			return
		}
	}
}

// giveUp is the error of run r whose backend did not return within grace
// of being stopped, once the host is reset where the backend can be.
func (s *sending) giveUp(r *sendRun, grace time.Duration) error {
	s.mu.Lock()
	why := r.overrun
	s.mu.Unlock()
	err := fmt.Errorf("the %s backend did not return within %s of being stopped", r.backend.Name(), grace)
	if why != nil {
		err = fmt.Errorf("%w; %w", why, err)
	}
	if rs, ok := r.backend.(resetter); ok {
		if rerr := rs.Reset(); rerr != nil {
			err = fmt.Errorf("%w; resetting it failed: %w", err, rerr)
		} else {
			err = fmt.Errorf("%w: reset", err)
		}
	}
	s.log.Error("send given up", "error", err)
	return err
}

// linger holds off new sends until the given-up run r's backend returns
// (ran), however late.
func (s *sending) linger(r *sendRun, ran <-chan ranSend) {
	s.mu.Lock()
	s.lingering = r
	s.mu.Unlock()
	go func() {
		<-ran // unbounded by design: it is what the next send waits for, refused (not blocked) meanwhile
		s.log.Info("the given-up send's backend returned: sends accepted again", "backend", r.backend.Name())
		s.mu.Lock()
		if s.lingering == r {
			s.lingering = nil
		}
		s.mu.Unlock()
	}()
}
