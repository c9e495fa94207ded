package agent

import (
	"context"
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

func (e *expiries) expired(_ context.Context, c *lease) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.got = append(e.got, c.coordinator)
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

// Two identities of the same CA, as the leases see them, and a caller of
// an insecure agent (no identity).
var (
	coordA = caller{name: "coordA", addr: "127.0.0.1:1"}
	coordB = caller{name: "coordB", addr: "127.0.0.1:2"}
	nobody = caller{addr: "127.0.0.1:3"}
	bg     = context.Background()
	noop   = func(uint64) error { return nil }
)

func wantKind(t *testing.T, err, kind error, msg, what string) {
	t.Helper()
	if !errors.Is(err, kind) || !strings.Contains(err.Error(), msg) {
		t.Errorf("%s: %v, want %v with %q", what, err, kind, msg)
	}
}

func TestLeasesAcquireRenewRelease(t *testing.T) {
	l, exp := newLeases(time.Second)
	_, err := l.acquire(bg, coordA, "", nil)
	wantKind(t, err, ErrInvalid, "coordinator_id: missing", "no coordinator")
	g, err := l.acquire(bg, coordA, "c1", nil)
	if err != nil || g.id == "" || g.ttl != time.Minute || g.gen != 1 {
		t.Fatalf("acquire: %v %v, want the default TTL, generation 1", g, err)
	}
	// Another identity never gets the lease, whatever coordinator_id it
	// gives: the holder's own one included.
	for _, id := range []string{"c2", "c1"} {
		_, err = l.acquire(bg, coordB, id, nil)
		wantKind(t, err, ErrLeaseHeld, `agent is leased to certificate "coordA" (coordinator_id "c1") until`, "another identity as "+id)
	}
	// The holder's identity with another coordinator_id: another run.
	_, err = l.acquire(bg, coordA, "c2", nil)
	wantKind(t, err, ErrLeaseHeld, `another run of the same certificate holds it (only coordinator_id "c1" may acquire it again)`, "the holder, another run")
	again, err := l.acquire(bg, coordA, "c1", ttlOf(2*time.Minute))
	if err != nil || again.id != g.id || again.ttl != 2*time.Minute || again.gen != 1 {
		t.Errorf("the holder again: %v %v, want its lease, 2m", again, err)
	}
	if kept, err := l.acquire(bg, coordA, "c1", nil); err != nil || kept.ttl != 2*time.Minute {
		t.Errorf("the holder again without a TTL: %v %v, want its TTL kept", kept, err)
	}
	for _, tc := range []struct {
		ttl  time.Duration
		want time.Duration
	}{{time.Millisecond, time.Second}, {time.Hour, 10 * time.Minute}, {5 * time.Second, 5 * time.Second}} {
		if r, err := l.renew(coordA, g.id, ttlOf(tc.ttl)); err != nil || r.ttl != tc.want {
			t.Errorf("renew for %s: %v %v, want clamped to %s", tc.ttl, r, err, tc.want)
		}
	}
	_, err = l.renew(coordA, g.id, ttlOf(0))
	wantKind(t, err, ErrInvalid, "ttl 0s: want a positive duration (1s-10m0s)", "renew for 0")
	if h, ok := l.holder(); !ok || h.coordinator != "c1" || h.holder != "coordA" || h.gen != 1 {
		t.Errorf("holder: %+v %v", h, ok)
	}
	if err := l.hold(coordA, g.id, func(uint64) error { return errors.New("fn ran") }); err == nil || err.Error() != "fn ran" {
		t.Errorf("hold: %v, want fn's error", err)
	}

	// Another identity with the right lease id: refused, naming the
	// holder, never the lease id; the lease is untouched.
	refused := `agent is leased to certificate "coordA" (coordinator_id "c1") until`
	for _, id := range []string{g.id, "guess", ""} {
		_, err = l.renew(coordB, id, nil)
		wantKind(t, err, ErrNotHolder, refused, "renew by another identity")
		ran := false
		err = l.hold(coordB, id, func(uint64) error { ran = true; return nil })
		wantKind(t, err, ErrNotHolder, refused, "hold by another identity")
		if ran {
			t.Error("hold ran fn for another identity")
		}
		c, _, err := l.release(coordB, id)
		wantKind(t, err, ErrNotHolder, refused, "release by another identity")
		if c != nil {
			t.Error("another identity released the lease")
		}
		if err != nil && strings.Contains(err.Error(), g.id) {
			t.Errorf("the refusal shows the lease id: %v", err)
		}
	}
	if err := l.check(coordA, g.id); err != nil {
		t.Errorf("the holder after the refusals: %v", err)
	}

	c, done, err := l.release(coordA, g.id)
	if err != nil || c == nil || c.coordinator != "c1" {
		t.Fatalf("release: %v %v", c, err)
	}
	done()
	if c, _, err := l.release(coordA, g.id); c != nil || err != nil {
		t.Errorf("released twice: %v %v", c, err)
	}
	if _, ok := l.holder(); ok {
		t.Error("a holder after release")
	}
	ran := false
	err = l.hold(coordA, g.id, func(uint64) error { ran = true; return nil })
	wantKind(t, err, ErrNoLease, "lease_id: not the agent's current lease", "hold a released lease")
	if ran {
		t.Error("hold ran fn without the lease")
	}
	wantKind(t, l.check(coordA, ""), ErrNoLease, "lease_id: missing: acquire a lease first", "no lease id")
	if g, err := l.acquire(bg, coordB, "c2", nil); err != nil || g.gen != 2 {
		t.Errorf("another identity after release: %v %v, want generation 2", g, err)
	}
	if got := exp.list(); len(got) != 0 {
		t.Errorf("expired %v: nothing expired", got)
	}
}

// TestLeasesInsecureHaveNoIdentity checks the leases of an agent serving
// --insecure: no caller has an identity, so the coordinator_id alone tells
// holders apart, and the lease id is all that guards the lease.
func TestLeasesInsecureHaveNoIdentity(t *testing.T) {
	l, _ := newLeases(time.Second)
	g, err := l.acquire(bg, nobody, "c1", nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = l.acquire(bg, nobody, "c2", nil)
	wantKind(t, err, ErrLeaseHeld, `agent is leased to coordinator_id "c1" (no identity: --insecure) until`, "another coordinator_id")
	if again, err := l.acquire(bg, nobody, "c1", nil); err != nil || again.id != g.id {
		t.Errorf("the same coordinator_id again: %v %v", again, err)
	}
	if err := l.hold(nobody, g.id, noop); err != nil {
		t.Errorf("hold with the lease id: %v", err)
	}
	wantKind(t, l.check(nobody, "guess"), ErrNoLease, "not the agent's current lease", "a wrong lease id")
}

// TestLeasesForceRelease checks the operator's force-release: it ends
// whoever's lease, and the next acquire waits for its cleanup.
func TestLeasesForceRelease(t *testing.T) {
	l, _ := newLeases(time.Second)
	if c, done := l.forceRelease(); c != nil || done != nil {
		t.Fatalf("force-release without a lease: %v", c)
	}
	g, err := l.acquire(bg, coordA, "c1", nil)
	if err != nil {
		t.Fatal(err)
	}
	c, done := l.forceRelease()
	if c == nil || c.holder != "coordA" || c.gen != g.gen {
		t.Fatalf("force-release: %+v", c)
	}
	wantKind(t, l.check(coordA, g.id), ErrNoLease, "not the agent's current lease", "the force-released lease")
	ctx, cancel := context.WithTimeout(bg, 50*time.Millisecond)
	defer cancel()
	_, err = l.acquire(ctx, coordB, "c2", nil)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "waiting for the previous lease's cleanup") {
		t.Errorf("acquire during the cleanup: %v, want it to wait within its context", err)
	}
	done()
	if g2, err := l.acquire(bg, coordB, "c2", nil); err != nil || g2.gen != g.gen+1 {
		t.Errorf("acquire after the cleanup: %v %v", g2, err)
	}
}

func TestLeasesExpire(t *testing.T) {
	l, exp := newLeases(time.Millisecond)
	g, err := l.acquire(bg, coordA, "c1", ttlOf(30*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	poll(t, 3*time.Second, "expiry", func() bool { return len(exp.list()) == 1 })
	if got := exp.list(); got[0] != "c1" {
		t.Errorf("expired %v, want c1", got)
	}
	wantKind(t, l.check(coordA, g.id), ErrNoLease, "not the agent's current lease", "check after expiry")

	// Expired but its timer not run yet: the check says so, and the next
	// acquire cleans up first.
	g, err = l.acquire(bg, coordA, "c1", ttlOf(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	l.mu.Lock()
	l.cur.timer.Stop()
	l.cur.expires = time.Now().Add(-time.Millisecond)
	l.mu.Unlock()
	wantKind(t, l.check(coordA, g.id), ErrNoLease, "lease_id: the lease has expired", "check past expiry")
	if _, err := l.acquire(bg, coordB, "c2", nil); err != nil {
		t.Errorf("another coordinator past the expiry: %v", err)
	}
	if got := exp.list(); len(got) != 2 {
		t.Errorf("expired %v, want the past lease cleaned up before the new one", got)
	}

	// A renewal pushes the expiry out.
	l2, exp2 := newLeases(time.Millisecond)
	g, _ = l2.acquire(bg, coordA, "c1", ttlOf(100*time.Millisecond))
	for range 4 {
		time.Sleep(50 * time.Millisecond)
		if _, err := l2.renew(coordA, g.id, nil); err != nil {
			t.Fatalf("renew: %v", err)
		}
	}
	if got := exp2.list(); len(got) != 0 {
		t.Errorf("a renewed lease expired: %v", got)
	}
}

func TestLeasesClose(t *testing.T) {
	l, exp := newLeases(time.Millisecond)
	g, err := l.acquire(bg, coordA, "c1", ttlOf(20*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	l.close()
	wantKind(t, l.check(coordA, g.id), ErrShuttingDown, "the agent is shutting down", "check after close")
	_, err = l.acquire(bg, coordA, "c1", nil)
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
		expired: func(context.Context, *lease) {
			close(started)
			<-release
			ended.Store(true)
		}}
	if _, err := l.acquire(bg, coordA, "c1", ttlOf(time.Millisecond)); err != nil {
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
	g, err := l.acquire(bg, coordA, "c1", ttlOf(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	inside, leave := make(chan struct{}), make(chan struct{})
	held := make(chan error, 1)
	go func() {
		held <- l.hold(coordA, g.id, func(uint64) error { close(inside); <-leave; return nil })
	}()
	<-inside
	renewed := make(chan error, 1)
	go func() { _, err := l.renew(coordA, g.id, nil); renewed <- err }()
	select {
	case err := <-renewed:
		if err != nil {
			t.Fatalf("renew under a held operation: %v", err)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("renew waited for an operation under hold")
	}
	if err := l.check(coordA, g.id); err != nil {
		t.Fatalf("check under a held operation: %v", err)
	}
	if _, ok := l.holder(); !ok {
		t.Fatal("holder under a held operation: none")
	}
	released := make(chan bool, 1)
	go func() {
		c, done, _ := l.release(coordA, g.id)
		if done != nil {
			done()
		}
		released <- c != nil
	}()
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
		expired: func(context.Context, *lease) { close(started); <-release }}
	if _, err := l.acquire(bg, coordA, "c1", ttlOf(time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	select {
	case <-started:
	case <-time.After(3 * time.Second):
		t.Fatal("the lease did not expire")
	}
	granted := make(chan error, 1)
	go func() { _, err := l.acquire(bg, coordB, "c2", nil); granted <- err }()
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

// TestLeasesEndIsBounded checks that no wait of a lease's end is
// unbounded: an operation under hold that never returns holds up a
// release only for the cleanup's bound, and an acquire waits for a
// cleanup that never ends only as long.
func TestLeasesEndIsBounded(t *testing.T) {
	l, _ := newLeases(time.Millisecond)
	l.cleanupTimeout = 100 * time.Millisecond
	g, err := l.acquire(bg, coordA, "c1", nil)
	if err != nil {
		t.Fatal(err)
	}
	inside, wedged := make(chan struct{}), make(chan struct{})
	defer close(wedged)
	go func() { _ = l.hold(coordA, g.id, func(uint64) error { close(inside); <-wedged; return nil }) }()
	<-inside
	t0 := time.Now()
	c, done, err := l.release(coordA, g.id)
	if err != nil || c == nil {
		t.Fatalf("release past a wedged operation: %v %v", c, err)
	}
	if d := time.Since(t0); d < 100*time.Millisecond || d > 3*time.Second {
		t.Errorf("release took %s, want the cleanup's bound (100ms)", d)
	}
	// Its cleanup never reports done: the next acquire waits the bound,
	// then goes ahead.
	_ = done
	t0 = time.Now()
	if _, err := l.acquire(bg, coordB, "c2", nil); err != nil {
		t.Fatalf("acquire past a cleanup that never ends: %v", err)
	}
	if d := time.Since(t0); d < 50*time.Millisecond || d > 3*time.Second {
		t.Errorf("acquire took %s, want about the cleanup's bound (100ms)", d)
	}
}
