package agent

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/linerate/linerate/pktgen"
)

// stuckBackend ignores its context until released (a kernel write that
// never returns); Reset records that the host was reset.
type stuckBackend struct {
	release chan struct{}
	resets  *atomic.Int32
}

func (stuckBackend) Name() pktgen.BackendName { return "stuck" }
func (b stuckBackend) Run(_ context.Context, _ pktgen.Config, progress func(pktgen.Progress)) (*pktgen.Summary, error) {
	progress(pktgen.Progress{Packets: 3})
	<-b.release
	return &pktgen.Summary{Packets: 99}, nil
}
func (b stuckBackend) Reset() error { b.resets.Add(1); return nil }

// A send by count still running past its deadline (10 packets at 100 pps:
// 100 ms expected, 125 ms + a 50 ms margin) is stopped by the watchdog:
// the backend sees its context end, the run fails with ErrOverrun and the
// reason, and Watch shows what it sent.
func TestWatchdogStopsAnOverrun(t *testing.T) {
	s := unitService(t, RoleSender, fakeNetOS{}).tx
	s.watchdog = watchdogTimes{margin: 50 * time.Millisecond, grace: time.Minute}
	ctx := ctxT(t, 10*time.Second)
	cfg := sendConfig()
	cfg.Count, cfg.RatePPS = 10, 100
	if err := s.configure(cfg, blockingBackend{}, nil); err != nil {
		t.Fatal(err)
	}
	r, _ := s.schedule()
	at := time.Now().Add(20 * time.Millisecond)
	if _, err := s.start(ctx, r, at); err != nil {
		t.Fatal(err)
	}
	_, err := s.result(ctx, r, true)
	took := time.Since(at)
	wantKind(t, err, ErrFailed, "result: the run failed: stopped by the watchdog: the send was still running 175ms after its start, past its deadline (100ms expected: count 10 at 100 pps, + 1/4 + 50ms margin)", "an overrun")
	if !errors.Is(err, ErrOverrun) {
		t.Errorf("%v: not ErrOverrun", err)
	}
	if took < 175*time.Millisecond || took > 5*time.Second {
		t.Errorf("stopped %s after the instant, want at the 175ms deadline", took)
	}
	if st := s.state(); st.phase != phaseFailed || st.progress.Packets != 7 || !errors.Is(st.err, ErrOverrun) {
		t.Errorf("state after the overrun: %+v, want failed with the summary's 7 packets", st)
	}

	// Within its deadline a run is let be.
	cfg.Count = 5
	_ = s.configure(cfg, countingBackend{}, nil)
	r, _ = s.schedule()
	if _, err := s.start(ctx, r, time.Now()); err != nil {
		t.Fatal(err)
	}
	if res, err := s.result(ctx, r, true); err != nil || res.summary.Packets != 5 {
		t.Errorf("a run within its deadline: %+v %v", res, err)
	}
}

// A backend that does not return once stopped (by the watchdog here) is
// given up after the grace: the host is reset, the run fails saying so,
// and Result and the end of the lease do not wait for the backend; its
// late return changes nothing.
func TestWatchdogGivesUpAStuckBackend(t *testing.T) {
	s := unitService(t, RoleSender, fakeNetOS{}).tx
	s.watchdog = watchdogTimes{margin: 50 * time.Millisecond, grace: 100 * time.Millisecond}
	ctx := ctxT(t, 10*time.Second)
	cfg := sendConfig()
	cfg.Count, cfg.RatePPS = 10, 100
	be := stuckBackend{release: make(chan struct{}), resets: new(atomic.Int32)}
	_ = s.configure(cfg, be, nil)
	r, _ := s.schedule()
	if _, err := s.start(ctx, r, time.Now()); err != nil {
		t.Fatal(err)
	}
	_, err := s.result(ctx, r, true)
	wantKind(t, err, ErrOverrun, "past its deadline (100ms expected: count 10 at 100 pps, + 1/4 + 50ms margin); the stuck backend did not return within 100ms of being stopped: reset", "a stuck backend")
	if n := be.resets.Load(); n != 1 {
		t.Errorf("%d resets, want 1", n)
	}
	if err := s.end(ctx); err != nil {
		t.Errorf("end after giving up: %v", err)
	}
	// Until the given-up backend returns, no send is configured (its late
	// end must not cut the next one short).
	wantKind(t, s.configure(cfg, countingBackend{}, nil), ErrBusy, "configure: the stuck backend of the send given up 0s ago has not returned yet", "configure while a backend lingers")
	close(be.release)
	poll(t, 3*time.Second, "sends accepted again", func() bool { return s.idle() == nil })

	// Stopped by Stop, not by the watchdog: given up the same way.
	be2 := stuckBackend{release: make(chan struct{}), resets: new(atomic.Int32)}
	cfg.Count, cfg.RatePPS = 0, 0
	cfg.Duration = time.Hour
	_ = s.configure(cfg, be2, nil)
	r, _ = s.schedule()
	if _, err := s.start(ctx, r, time.Now()); err != nil {
		t.Fatal(err)
	}
	from := time.Now()
	if stopped, _, err := s.stop(ctx, r); err != nil || !stopped {
		t.Errorf("stop a stuck backend: %v %v", stopped, err)
	}
	if d := time.Since(from); d > 5*time.Second {
		t.Errorf("stop took %s", d)
	}
	_, err = s.result(ctx, r, false)
	wantKind(t, err, ErrFailed, "the stuck backend did not return within 100ms of being stopped: reset", "stopped, stuck")
	if strings.Contains(err.Error(), "watchdog") {
		t.Errorf("a stop is not the watchdog's: %v", err)
	}
	close(be2.release) // its late return is dropped
	poll(t, 3*time.Second, "sends accepted again", func() bool { return s.idle() == nil })
	if st := s.state(); st.phase != phaseFailed || st.progress.Packets != 3 {
		t.Errorf("after the late return: %+v, want failed with the progress seen", st)
	}
}

// The cleanup after an expired lease (which the next AcquireLease waits
// for) does not wait on a stuck send: it is given up after the grace and
// the cleanup goes on.
func TestExpiryDoesNotWaitOnAStuckSend(t *testing.T) {
	svc := unitService(t, RoleSender, fakeNetOS{})
	s := svc.tx
	s.watchdog = watchdogTimes{grace: 100 * time.Millisecond}
	be := stuckBackend{release: make(chan struct{}), resets: new(atomic.Int32)}
	cfg := sendConfig()
	cfg.Count, cfg.Duration = 0, time.Hour
	_ = s.configure(cfg, be, nil)
	r, _ := s.schedule()
	if _, err := s.start(context.Background(), r, time.Now()); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { svc.expired(context.Background(), &lease{coordinator: "c1"}); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the expiry's cleanup waits on the stuck send")
	}
	select {
	case <-r.done:
	default:
		t.Error("the cleanup returned before the run ended")
	}
	wantPhase(t, s, phaseIdle, "after the expiry")
	if be.resets.Load() != 1 {
		t.Errorf("%d resets, want 1", be.resets.Load())
	}
	close(be.release)
	poll(t, 3*time.Second, "the stuck backend returned", func() bool { return s.idle() == nil })
}
