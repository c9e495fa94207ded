package agent

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/hashicorp/serf/serf"

	"github.com/linerate/linerate/pktgen"
	"github.com/linerate/linerate/topology"
)

// unitService is a service of role on a fake host, without gRPC or
// gossip, closed at the end of the test.
func unitService(t *testing.T, role Role, os fakeNetOS) *service {
	t.Helper()
	return unitServiceOf(t, Config{Role: role, netOS: os})
}

// unitServiceOf is unitService of cfg, on interface data0 with temporary
// state and root directories.
func unitServiceOf(t *testing.T, cfg Config) *service {
	t.Helper()
	cfg.Iface, cfg.StateDir, cfg.Root, cfg.Logger = "data0", t.TempDir(), t.TempDir(), testLog(t)
	if err := cfg.defaults(); err != nil {
		t.Fatal(err)
	}
	root, err := topology.OpenRoot(cfg.Root)
	if err != nil {
		t.Fatal(err)
	}
	s := newService(&cfg, root, cfg.Logger, func() []serf.Member { return nil })
	t.Cleanup(func() {
		if err := s.close(context.Background()); err != nil {
			t.Errorf("close: %v", err)
		}
		root.Close()
	})
	return s
}

// blockingBackend sends until stopped; failing fails at once.
type blockingBackend struct{}

func (blockingBackend) Name() pktgen.BackendName { return "blocking" }
func (blockingBackend) Run(ctx context.Context, cfg pktgen.Config, progress func(pktgen.Progress)) (*pktgen.Summary, error) {
	progress(pktgen.Progress{Packets: 5})
	<-ctx.Done()
	return &pktgen.Summary{Backend: "blocking", Packets: 7, Interrupted: true}, nil
}

type failingBackend struct{}

func (failingBackend) Name() pktgen.BackendName { return "failing" }
func (failingBackend) Run(context.Context, pktgen.Config, func(pktgen.Progress)) (*pktgen.Summary, error) {
	return nil, errors.New("no such device")
}

func sendConfig() pktgen.Config {
	mac, _ := net.ParseMAC("02:00:00:00:00:02")
	return pktgen.Config{Device: "data0", CPUs: []int{0}, Count: 100, PktSize: 60, DstMin: netip.MustParseAddr("198.18.0.2"), DstMAC: mac}
}

func wantPhase(t *testing.T, s *sending, want phase, what string) {
	t.Helper()
	if got := s.state().phase; got != want {
		t.Errorf("%s: phase %s, want %s", what, got, want)
	}
}

func TestSendingPhases(t *testing.T) {
	s := unitService(t, RoleSender, fakeNetOS{tx: &txReads{values: []uint64{3, 10}}}).tx
	ctx := context.Background()
	wantPhase(t, s, phaseIdle, "new")
	_, err := s.schedule()
	wantKind(t, err, ErrNotReady, "start: no configured run (Configure first", "start unconfigured")
	wantKind(t, func() error { _, err := s.result(ctx, s.started(), false); return err }(), ErrNotReady, "result: no run started", "result unstarted")

	if err := s.configure(sendConfig(), countingBackend{}, nil); err != nil {
		t.Fatal(err)
	}
	wantPhase(t, s, phaseConfigured, "configured")
	r, err := s.schedule()
	if err != nil {
		t.Fatal(err)
	}
	wantPhase(t, s, phaseScheduled, "scheduled")
	wantKind(t, s.idle(), ErrBusy, "configure: a send is running (Stop it first)", "idle while scheduled")
	wantKind(t, s.configure(sendConfig(), countingBackend{}, nil), ErrBusy, "a send is running", "configure while scheduled")
	at := time.Now().Add(20 * time.Millisecond)
	started, err := s.start(ctx, r, at)
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.result(ctx, r, true)
	if err != nil {
		t.Fatal(err)
	}
	// The backend waits for the instant itself (spinning to it), so its
	// send may end before the agent's own timer for Start fires: stopped
	// is never before the instant, not necessarily after started.
	if res.summary.Packets != 100 || !res.txDroppedOK || res.txDropped != 7 || !res.started.Equal(started) || res.stopped.Before(at) {
		t.Errorf("result: %+v, want 100 packets, tx_dropped 10 − 3", res)
	}
	wantPhase(t, s, phaseDone, "done")
	if st := s.state(); !st.started || st.progress.Packets != 100 {
		t.Errorf("state when done: %+v, want the summary's count", st)
	}
	if stopped, _, err := s.stop(ctx, r); err != nil || stopped {
		t.Errorf("stop a finished run: %v %v", stopped, err)
	}
	_, err = s.schedule()
	wantKind(t, err, ErrNotReady, "a finished run needs Configure again", "start a finished run")
	if err := s.end(ctx); err != nil {
		t.Fatal(err)
	}
	wantPhase(t, s, phaseIdle, "ended")
}

func TestSendingStopAndFailures(t *testing.T) {
	s := unitService(t, RoleSender, fakeNetOS{}).tx // tx_dropped unreadable: the result has none
	ctx := context.Background()

	// Stopped while it runs: stopped, and its result is the summary.
	_ = s.configure(sendConfig(), blockingBackend{}, nil)
	r, _ := s.schedule()
	if _, err := s.start(ctx, r, time.Now()); err != nil {
		t.Fatal(err)
	}
	wantPhase(t, s, phaseRunning, "running")
	_, err := s.result(ctx, r, false)
	wantKind(t, err, ErrNotReady, "result: the run is still going", "result while running")
	poll(t, 3*time.Second, "progress", func() bool { return s.state().progress.Packets == 5 })
	if stopped, at, err := s.stop(ctx, s.started()); err != nil || !stopped || at.IsZero() {
		t.Errorf("stop: %v %v %v", stopped, at, err)
	}
	if res, err := s.result(ctx, r, false); err != nil || res.summary.Packets != 7 || res.txDroppedOK {
		t.Errorf("result after stop: %+v %v, want 7 packets and no tx_dropped", res, err)
	}
	wantPhase(t, s, phaseDone, "stopped")

	// Stopped before its instant: aborted.
	_ = s.configure(sendConfig(), countingBackend{}, nil)
	r, _ = s.schedule()
	go func() {
		time.Sleep(20 * time.Millisecond)
		_, _, _ = s.stop(ctx, s.started())
	}()
	_, err = s.start(ctx, r, time.Now().Add(time.Minute))
	wantKind(t, err, ErrAborted, "start: stopped before the start instant", "stopped before the instant")
	wantPhase(t, s, phaseDone, "aborted")

	// The caller gone before the instant: canceled, and the run failed.
	_ = s.configure(sendConfig(), countingBackend{}, nil)
	r, _ = s.schedule()
	cctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	_, err = s.start(cctx, r, time.Now().Add(time.Minute))
	wantKind(t, err, ErrCanceled, "start: the call ended before", "caller gone")
	wantPhase(t, s, phaseFailed, "caller gone")

	// The backend fails.
	_ = s.configure(sendConfig(), failingBackend{}, nil)
	r, _ = s.schedule()
	if _, err := s.start(ctx, r, time.Now()); err != nil {
		t.Fatal(err)
	}
	_, err = s.result(ctx, r, true)
	wantKind(t, err, ErrFailed, "result: the run failed: no such device", "backend fails")
	if st := s.state(); st.phase != phaseFailed || st.err == nil {
		t.Errorf("state after the failure: %+v", st)
	}

	// The end of a lease stops a running send.
	_ = s.configure(sendConfig(), blockingBackend{}, nil)
	r, _ = s.schedule()
	if _, err := s.start(ctx, r, time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := s.end(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case <-r.done:
	default:
		t.Error("end returned before the send ended")
	}
	wantPhase(t, s, phaseIdle, "ended")
}

func TestCheckStartAt(t *testing.T) {
	if err := checkStartAt(time.Now().Add(30 * time.Second)); err != nil {
		t.Error(err)
	}
	wantKind(t, checkStartAt(time.Now().Add(2*time.Minute)), ErrInvalid, "more than 1m0s ahead", "two minutes ahead")
}

// recordingBackend waits for StartAt like a real backend and records the
// instant it was handed; armFails fails before the instant, as a backend
// that cannot arm; endsAtOnce returns at once, ignoring the instant.
type recordingBackend struct{ at chan time.Time }

func (recordingBackend) Name() pktgen.BackendName { return "recording" }
func (b recordingBackend) Run(ctx context.Context, cfg pktgen.Config, _ func(pktgen.Progress)) (*pktgen.Summary, error) {
	b.at <- cfg.StartAt
	if err := pktgen.WaitUntil(ctx, cfg.StartAt); err != nil {
		return &pktgen.Summary{Interrupted: true}, nil
	}
	return &pktgen.Summary{Packets: cfg.Count}, nil
}

type armFails struct{}

func (armFails) Name() pktgen.BackendName { return "armfails" }
func (armFails) Run(context.Context, pktgen.Config, func(pktgen.Progress)) (*pktgen.Summary, error) {
	return nil, errors.New("load the XDP program: operation not permitted")
}

type endsAtOnce struct{}

func (endsAtOnce) Name() pktgen.BackendName { return "null" }
func (endsAtOnce) Run(context.Context, pktgen.Config, func(pktgen.Progress)) (*pktgen.Summary, error) {
	return &pktgen.Summary{}, nil
}

// The backend is handed the run before the instant, with the instant as
// its StartAt, and start returns at the instant; a backend that fails
// while arming fails the start; one that ends by itself before the
// instant does not.
func TestStartArmsBeforeTheInstant(t *testing.T) {
	s := unitService(t, RoleSender, fakeNetOS{}).tx
	ctx := context.Background()
	rec := recordingBackend{at: make(chan time.Time, 1)}
	_ = s.configure(sendConfig(), rec, nil)
	r, _ := s.schedule()
	at := time.Now().Add(50 * time.Millisecond).Round(0)
	started, err := s.start(ctx, r, at)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-rec.at:
		if !got.Equal(at) {
			t.Errorf("the backend's StartAt %s, want the instant %s", got, at)
		}
	default:
		t.Error("the backend was not handed the run before the instant")
	}
	if started.Before(at) {
		t.Errorf("started %s before the instant %s", started, at)
	}
	if res, err := s.result(ctx, r, true); err != nil || res.summary.Packets != 100 {
		t.Errorf("result %+v %v", res, err)
	}

	_ = s.configure(sendConfig(), armFails{}, nil)
	r, _ = s.schedule()
	_, err = s.start(ctx, r, time.Now().Add(time.Minute))
	wantKind(t, err, ErrFailed, "start: the send failed before the start instant: load the XDP program", "arming fails")
	wantPhase(t, s, phaseFailed, "arming fails")

	_ = s.configure(sendConfig(), endsAtOnce{}, nil)
	r, _ = s.schedule()
	at = time.Now().Add(30 * time.Millisecond)
	if started, err := s.start(ctx, r, at); err != nil || started.Before(at) {
		t.Errorf("a backend that ends at once: started %s (instant %s), %v", started, at, err)
	}
	wantPhase(t, s, phaseDone, "ended at once")
}
