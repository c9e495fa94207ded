package agent

import (
	"crypto/rand"
	"encoding/hex"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
)

// lease is the agent's grant to one coordinator.
type lease struct {
	id, coordinator string
	expires         time.Time
	ttl             time.Duration
	timer           *time.Timer
}

// grant is what acquiring or renewing a lease tells its holder.
type grant struct {
	id      string
	expires time.Time
	ttl     time.Duration
}

// leases is the lease state machine: one coordinator at a time holds the
// agent, for a TTL it renews; a lease ends by release, by expiry (which
// calls expired) or at shutdown. Operations that need the lease run under
// hold, so it cannot end while they run.
type leases struct {
	// def is the TTL of a new lease that asks for none; a requested TTL
	// is clamped to min..max.
	def, min, max time.Duration
	log           hclog.Logger
	// expired runs, outside the lock, when a lease ends by expiry.
	expired func(coordinator string)

	// life is held for reading by the operations that run under hold and
	// for writing to end a lease (release, expiry, close): a lease cannot
	// end under an operation, while renewing it, describing it or checking
	// it (mu alone) never waits for one — an Arm that loads an XDP program
	// for seconds no longer holds up the coordinator's renewal.
	life sync.RWMutex

	mu     sync.Mutex
	cur    *lease
	closed bool
	// cleanups are the expired calls under way; close waits for them.
	cleanups sync.WaitGroup
	// cleaning is closed when the expired call under way ends (nil: none):
	// no new lease is granted before the old one is cleaned up, so the
	// cleanup cannot undo the next holder's work.
	cleaning chan struct{}
}

func newLeaseID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// clampTTL is the TTL to grant for the request ttl (nil: def).
func (l *leases) clampTTL(ttl *time.Duration, def time.Duration) (time.Duration, error) {
	if ttl == nil {
		return def, nil
	}
	t := *ttl
	if t <= 0 {
		return 0, failf(ErrInvalid, "ttl %s: want a positive duration (%s-%s)", t, l.min, l.max)
	}
	return min(max(t, l.min), l.max), nil
}

// acquire grants coordinator the lease, for ttl (nil: the default). The
// holder acquiring again keeps its lease id (and, without ttl, its TTL);
// another coordinator is refused while the lease is current.
func (l *leases) acquire(coordinator string, ttl *time.Duration) (grant, error) {
	if coordinator == "" {
		return grant{}, failf(ErrInvalid, "coordinator_id: missing: name the coordinator asking")
	}
	l.mu.Lock()
	for {
		if c := l.cur; c != nil && !time.Now().Before(c.expires) {
			// Expired, its timer not run yet: clean up as the timer would
			// before anyone gets a new lease.
			l.mu.Unlock()
			l.expire(c.id)
			l.mu.Lock()
			continue
		}
		if done := l.cleaning; done != nil { // an expiry's cleanup under way
			l.mu.Unlock()
			<-done
			l.mu.Lock()
			continue
		}
		break
	}
	defer l.mu.Unlock()
	if l.closed {
		return grant{}, failf(ErrShuttingDown, "the agent is shutting down")
	}
	now := time.Now()
	c := l.cur
	if c != nil && now.Before(c.expires) && c.coordinator != coordinator {
		return grant{}, failf(ErrLeaseHeld, "agent is leased to coordinator %q until %s", c.coordinator, c.expires.UTC().Format(time.RFC3339Nano))
	}
	def := l.def
	if c != nil && c.coordinator == coordinator && now.Before(c.expires) {
		def = c.ttl
	} else {
		c = nil
	}
	t, err := l.clampTTL(ttl, def)
	if err != nil {
		return grant{}, err
	}
	if c == nil {
		c = &lease{id: newLeaseID(), coordinator: coordinator}
		l.cur = c
		l.log.Info("lease acquired", "coordinator", coordinator, "ttl", t)
	}
	c.ttl, c.expires = t, now.Add(t)
	l.armTimer(c)
	return grant{id: c.id, expires: c.expires, ttl: t}, nil
}

// renew extends lease id by ttl (nil: its TTL).
func (l *leases) renew(id string, ttl *time.Duration) (grant, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.checkLocked(id); err != nil {
		return grant{}, err
	}
	c := l.cur
	t, err := l.clampTTL(ttl, c.ttl)
	if err != nil {
		return grant{}, err
	}
	c.ttl, c.expires = t, time.Now().Add(t)
	l.armTimer(c)
	return grant{id: c.id, expires: c.expires, ttl: t}, nil
}

// release ends lease id; ok is false when it is not the current lease
// (already released or expired: nothing to do).
func (l *leases) release(id string) (coordinator string, ok bool) {
	c := l.end(id, false, func(*lease) bool { return true })
	if c == nil {
		return "", false
	}
	return c.coordinator, true
}

// end takes lease id off the agent when it is current and ends(c) says
// it ends, waiting for the operations under hold to return; it returns
// the lease it ended, or nil. With cleanup, an ended lease counts in
// cleanups until the caller's Done.
func (l *leases) end(id string, cleanup bool, ends func(c *lease) bool) *lease {
	l.life.Lock()
	defer l.life.Unlock()
	l.mu.Lock()
	defer l.mu.Unlock()
	c := l.cur
	if c == nil || c.id != id || !ends(c) {
		return nil
	}
	c.timer.Stop()
	l.cur = nil
	if cleanup {
		l.cleanups.Add(1) // under l.mu: close cannot have passed its Wait
		l.cleaning = make(chan struct{})
	}
	return c
}

// check refuses a lease id that is not the current, unexpired lease.
func (l *leases) check(id string) error { return l.hold(id, nil) }

// hold runs fn (when not nil) while lease id is current: the lease cannot
// end (expire, be released, be closed) until fn returns, but it can be
// renewed and read meanwhile. fn must not end a lease (release, close)
// nor call hold or check (a pending end would make the nested call wait).
func (l *leases) hold(id string, fn func() error) error {
	if fn != nil {
		l.life.RLock()
		defer l.life.RUnlock()
	}
	l.mu.Lock()
	err := l.checkLocked(id)
	l.mu.Unlock()
	if err != nil || fn == nil {
		return err
	}
	return fn()
}

// checkLocked is check; callers hold l.mu.
func (l *leases) checkLocked(id string) error {
	if l.closed {
		return failf(ErrShuttingDown, "the agent is shutting down")
	}
	c := l.cur
	switch {
	case id == "":
		return failf(ErrNoLease, "lease_id: missing: acquire a lease first (AcquireLease)")
	case c == nil || c.id != id:
		return failf(ErrNoLease, "lease_id: not the agent's current lease (unknown, released or expired)")
	case !time.Now().Before(c.expires):
		return failf(ErrNoLease, "lease_id: the lease has expired")
	}
	return nil
}

// holder is the coordinator holding a current lease, and its expiry.
func (l *leases) holder() (coordinator string, expires time.Time, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if c := l.cur; c != nil && time.Now().Before(c.expires) {
		return c.coordinator, c.expires, true
	}
	return "", time.Time{}, false
}

// close refuses every lease from now on and drops the current one (the
// caller cleans up after it: expired is not called), then waits for the
// cleanup of a lease that expired before it, so nothing of the agent runs
// on after its shutdown.
func (l *leases) close() {
	l.life.Lock()
	l.mu.Lock()
	l.closed = true
	if l.cur != nil {
		l.cur.timer.Stop()
		l.cur = nil
	}
	l.mu.Unlock()
	l.life.Unlock()
	l.cleanups.Wait()
}

// armTimer (re)starts the expiry timer of c. Callers hold l.mu.
func (l *leases) armTimer(c *lease) {
	if c.timer != nil {
		c.timer.Stop()
	}
	id := c.id
	c.timer = time.AfterFunc(time.Until(c.expires), func() { l.expire(id) })
}

// expire ends lease id if it is still current and past its expiry, and
// then, outside the locks, calls expired (synchronously: an acquire that
// finds an expired lease gets the agent only once it is cleaned up).
func (l *leases) expire(id string) {
	// A renewal re-arms the timer (armTimer stops this one), so a lease
	// still current here is one an acquire found expired or this timer's.
	c := l.end(id, l.expired != nil, func(c *lease) bool { return !time.Now().Before(c.expires) })
	if c == nil || l.expired == nil {
		return
	}
	defer l.cleanups.Done()
	l.expired(c.coordinator)
	l.mu.Lock()
	close(l.cleaning)
	l.cleaning = nil
	l.mu.Unlock()
}
