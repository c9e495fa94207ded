package agent

import (
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
)

// expiries counts the leases that expired, by coordinator.
type expiries struct {
	mu  sync.Mutex
	got []string
}

func (e *expiries) expired(c string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.got = append(e.got, c)
}

func (e *expiries) list() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.got...)
}

func newLeases(min time.Duration) (*leases, *expiries) {
	e := &expiries{}
	return &leases{def: time.Minute, min: min, max: 10 * time.Minute, log: hclog.NewNullLogger(), expired: e.expired}, e
}

func ttlOf(d time.Duration) *time.Duration { return &d }

func wantKind(t *testing.T, err, kind error, msg, what string) {
	t.Helper()
	if !errors.Is(err, kind) || !strings.Contains(err.Error(), msg) {
		t.Errorf("%s: %v, want %v with %q", what, err, kind, msg)
	}
}

func TestLeasesAcquireRenewRelease(t *testing.T) {
	l, exp := newLeases(time.Second)
	_, err := l.acquire("", nil)
	wantKind(t, err, ErrInvalid, "coordinator_id: missing", "no coordinator")
	g, err := l.acquire("c1", nil)
	if err != nil || g.id == "" || g.ttl != time.Minute {
		t.Fatalf("acquire: %v %v, want the default TTL", g, err)
	}
	_, err = l.acquire("c2", nil)
	wantKind(t, err, ErrLeaseHeld, `agent is leased to coordinator "c1" until`, "another coordinator")
	again, err := l.acquire("c1", ttlOf(2*time.Minute))
	if err != nil || again.id != g.id || again.ttl != 2*time.Minute {
		t.Errorf("the holder again: %v %v, want its lease, 2m", again, err)
	}
	if kept, err := l.acquire("c1", nil); err != nil || kept.ttl != 2*time.Minute {
		t.Errorf("the holder again without a TTL: %v %v, want its TTL kept", kept, err)
	}
	for _, tc := range []struct {
		ttl  time.Duration
		want time.Duration
	}{{time.Millisecond, time.Second}, {time.Hour, 10 * time.Minute}, {5 * time.Second, 5 * time.Second}} {
		if r, err := l.renew(g.id, ttlOf(tc.ttl)); err != nil || r.ttl != tc.want {
			t.Errorf("renew for %s: %v %v, want clamped to %s", tc.ttl, r, err, tc.want)
		}
	}
	_, err = l.renew(g.id, ttlOf(0))
	wantKind(t, err, ErrInvalid, "ttl 0s: want a positive duration (1s-10m0s)", "renew for 0")
	if c, _, ok := l.holder(); !ok || c != "c1" {
		t.Errorf("holder: %q %v", c, ok)
	}
	if err := l.hold(g.id, func() error { return errors.New("fn ran") }); err == nil || err.Error() != "fn ran" {
		t.Errorf("hold: %v, want fn's error", err)
	}

	if c, ok := l.release(g.id); !ok || c != "c1" {
		t.Errorf("release: %q %v", c, ok)
	}
	if _, ok := l.release(g.id); ok {
		t.Error("released twice")
	}
	if _, _, ok := l.holder(); ok {
		t.Error("a holder after release")
	}
	ran := false
	err = l.hold(g.id, func() error { ran = true; return nil })
	wantKind(t, err, ErrNoLease, "lease_id: not the agent's current lease", "hold a released lease")
	if ran {
		t.Error("hold ran fn without the lease")
	}
	wantKind(t, l.check(""), ErrNoLease, "lease_id: missing: acquire a lease first", "no lease id")
	if _, err := l.acquire("c2", nil); err != nil {
		t.Errorf("another coordinator after release: %v", err)
	}
	if got := exp.list(); len(got) != 0 {
		t.Errorf("expired %v: nothing expired", got)
	}
}

func TestLeasesExpire(t *testing.T) {
	l, exp := newLeases(time.Millisecond)
	g, err := l.acquire("c1", ttlOf(30*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	poll(t, 3*time.Second, "expiry", func() bool { return len(exp.list()) == 1 })
	if got := exp.list(); got[0] != "c1" {
		t.Errorf("expired %v, want c1", got)
	}
	wantKind(t, l.check(g.id), ErrNoLease, "not the agent's current lease", "check after expiry")

	// Expired but its timer not run yet: the check says so, and the next
	// acquire cleans up first.
	g, err = l.acquire("c1", ttlOf(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	l.mu.Lock()
	l.cur.timer.Stop()
	l.cur.expires = time.Now().Add(-time.Millisecond)
	l.mu.Unlock()
	wantKind(t, l.check(g.id), ErrNoLease, "lease_id: the lease has expired", "check past expiry")
	if _, err := l.acquire("c2", nil); err != nil {
		t.Errorf("another coordinator past the expiry: %v", err)
	}
	if got := exp.list(); len(got) != 2 {
		t.Errorf("expired %v, want the past lease cleaned up before the new one", got)
	}

	// A renewal pushes the expiry out.
	l2, exp2 := newLeases(time.Millisecond)
	g, _ = l2.acquire("c1", ttlOf(100*time.Millisecond))
	for range 4 {
		time.Sleep(50 * time.Millisecond)
		if _, err := l2.renew(g.id, nil); err != nil {
			t.Fatalf("renew: %v", err)
		}
	}
	if got := exp2.list(); len(got) != 0 {
		t.Errorf("a renewed lease expired: %v", got)
	}
}

func TestLeasesClose(t *testing.T) {
	l, exp := newLeases(time.Millisecond)
	g, err := l.acquire("c1", ttlOf(20*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	l.close()
	wantKind(t, l.check(g.id), ErrShuttingDown, "the agent is shutting down", "check after close")
	_, err = l.acquire("c1", nil)
	wantKind(t, err, ErrShuttingDown, "the agent is shutting down", "acquire after close")
	time.Sleep(60 * time.Millisecond)
	if got := exp.list(); len(got) != 0 {
		t.Errorf("a closed lease expired: %v", got)
	}
}

// TestLeasesCloseWaitsForExpiry checks that close returns only once the
// cleanup of a lease that expired before it has ended, so no part of a
// shut-down agent runs on (its logs outlived the agent before).
func TestLeasesCloseWaitsForExpiry(t *testing.T) {
	started, release := make(chan struct{}), make(chan struct{})
	var ended atomic.Bool
	l := &leases{def: time.Minute, min: time.Millisecond, max: time.Minute, log: hclog.NewNullLogger(),
		expired: func(string) {
			close(started)
			<-release
			ended.Store(true)
		}}
	if _, err := l.acquire("c1", ttlOf(time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	select {
	case <-started:
	case <-time.After(3 * time.Second):
		t.Fatal("the lease did not expire")
	}
	closed := make(chan struct{})
	go func() { l.close(); close(closed) }()
	select {
	case <-closed:
		t.Fatal("close returned while the expired lease's cleanup ran")
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	select {
	case <-closed:
	case <-time.After(3 * time.Second):
		t.Fatal("close did not return after the cleanup ended")
	}
	if !ended.Load() {
		t.Error("close returned before the cleanup ended")
	}
}

// TestLeasesHoldDoesNotBlockRenewal checks that an operation running
// under hold (an Arm loading its XDP program for seconds under emulation)
// lets the holder renew, check and describe the lease meanwhile, while
// the lease cannot end (release waits) until the operation returns.
func TestLeasesHoldDoesNotBlockRenewal(t *testing.T) {
	l, _ := newLeases(time.Millisecond)
	g, err := l.acquire("c1", ttlOf(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	inside, leave := make(chan struct{}), make(chan struct{})
	held := make(chan error, 1)
	go func() {
		held <- l.hold(g.id, func() error { close(inside); <-leave; return nil })
	}()
	<-inside
	renewed := make(chan error, 1)
	go func() { _, err := l.renew(g.id, nil); renewed <- err }()
	select {
	case err := <-renewed:
		if err != nil {
			t.Fatalf("renew under a held operation: %v", err)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("renew waited for an operation under hold")
	}
	if err := l.check(g.id); err != nil {
		t.Fatalf("check under a held operation: %v", err)
	}
	if _, _, ok := l.holder(); !ok {
		t.Fatal("holder under a held operation: none")
	}
	released := make(chan bool, 1)
	go func() { _, ok := l.release(g.id); released <- ok }()
	select {
	case <-released:
		t.Fatal("the lease was released while an operation held it")
	case <-time.After(50 * time.Millisecond):
	}
	close(leave)
	if err := <-held; err != nil {
		t.Fatalf("hold: %v", err)
	}
	select {
	case ok := <-released:
		if !ok {
			t.Fatal("release after the operation: not the current lease")
		}
	case <-time.After(3 * time.Second):
		t.Fatal("release did not go ahead after the operation returned")
	}
}

// TestLeasesAcquireWaitsForCleanup checks that once the timer has ended a
// lease, no new lease is granted until its cleanup (stop, disarm,
// restore) is over: the cleanup cannot undo the next holder's tuning.
func TestLeasesAcquireWaitsForCleanup(t *testing.T) {
	started, release := make(chan struct{}), make(chan struct{})
	l := &leases{def: time.Minute, min: time.Millisecond, max: time.Minute, log: hclog.NewNullLogger(),
		expired: func(string) { close(started); <-release }}
	if _, err := l.acquire("c1", ttlOf(time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	select {
	case <-started:
	case <-time.After(3 * time.Second):
		t.Fatal("the lease did not expire")
	}
	granted := make(chan error, 1)
	go func() { _, err := l.acquire("c2", nil); granted <- err }()
	select {
	case err := <-granted:
		t.Fatalf("c2 got the agent while c1's cleanup ran (err %v)", err)
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	select {
	case err := <-granted:
		if err != nil {
			t.Fatalf("acquire after the cleanup: %v", err)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("acquire did not go ahead after the cleanup ended")
	}
}
