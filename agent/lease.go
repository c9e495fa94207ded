package agent

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
)

// defaultCleanupTimeout bounds the cleanup at the end of a lease (stop,
// disarm, restore) and so an acquire's wait for it: past it the next
// coordinator gets the agent, and the cleanup, should it still run, leaves
// the later lease's run and tuning alone (its generation is older).
const defaultCleanupTimeout = 30 * time.Second

// lease is the agent's grant to one coordinator identity.
type lease struct {
	id, coordinator string
	// holder is the certificate name of the caller that acquired it; ""
	// under --insecure, where there is no identity and coordinator alone
	// tells holders apart.
	holder string
	// gen is the lease's generation: 1, 2, … in the order leases were
	// granted. An end's cleanup carries it, so a late one never undoes the
	// tuning of a later lease.
	gen     uint64
	expires time.Time
	ttl     time.Duration
	timer   *time.Timer
	// cleaning is closed when the cleanup after the lease ended is over.
	cleaning chan struct{}
}

// grant is what acquiring or renewing a lease tells its holder.
type grant struct {
	id      string
	gen     uint64
	expires time.Time
	ttl     time.Duration
}

// holderInfo is who holds a current lease, as Describe and Watch show it:
// never its id.
type holderInfo struct {
	holder, coordinator string
	gen                 uint64
	expires             time.Time
}

// leases is the lease state machine: one identity at a time holds the
// agent, for a TTL it renews; a lease ends by release, by expiry (which
// calls expired), by an operator's force-release or at shutdown.
// Operations that need the lease run under hold, so it cannot end while
// they run. Every call but acquire names its caller: only the identity
// holding the lease may use it (identity.go).
type leases struct {
	// def is the TTL of a new lease that asks for none; a requested TTL
	// is clamped to min..max.
	def, min, max time.Duration
	// cleanupTimeout bounds an ended lease's cleanup and an acquire's
	// wait for it (0: defaultCleanupTimeout).
	cleanupTimeout time.Duration
	log            hclog.Logger
	// expired runs, outside the lock, when a lease ends by expiry; its
	// context ends after cleanupTimeout.
	expired func(ctx context.Context, c *lease)

	// life is held for reading by the operations that run under hold and
	// for writing to end a lease (release, expiry, close): a lease cannot
	// end under an operation, while renewing it, describing it or checking
	// it (mu alone) never waits for one — an Arm that loads an XDP program
	// for seconds no longer holds up the coordinator's renewal.
	life sync.RWMutex

	mu     sync.Mutex
	cur    *lease
	gen    uint64 // the last generation granted
	closed bool
	// cleanups are the expired calls under way; close waits for them.
	cleanups sync.WaitGroup
	// cleaning is closed when the cleanup of the lease that ended last is
	// over (nil: none under way), cleanBy the time an acquire stops
	// waiting for it: no new lease is granted before the old one is
	// cleaned up, or its cleanup overran its bound.
	cleaning chan struct{}
	cleanBy  time.Time
}

func newLeaseID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func (l *leases) cleanupBound() time.Duration {
	if l.cleanupTimeout > 0 {
		return l.cleanupTimeout
	}
	return defaultCleanupTimeout
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

// acquire grants who the lease for coordinator, for ttl (nil: the
// default). It never hands out another's lease: while an identity holds
// it, any other is refused (ErrLeaseHeld naming the holder and the
// expiry). The holder acquiring again with the same coordinator_id (a
// retry whose answer was lost) keeps its lease id and, without ttl, its
// TTL; with another coordinator_id (another run of the same identity) it
// is refused too. It waits, within ctx, for the previous lease's cleanup.
func (l *leases) acquire(ctx context.Context, who caller, coordinator string, ttl *time.Duration) (grant, error) {
	if coordinator == "" {
		return grant{}, failf(ErrInvalid, "coordinator_id: missing: name the coordinator asking")
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.settleLocked(ctx); err != nil {
		return grant{}, err
	}
	if l.closed {
		return grant{}, failf(ErrShuttingDown, "the agent is shutting down")
	}
	now := time.Now()
	c := l.cur
	if c != nil && (c.holder != who.name || c.coordinator != coordinator) {
		return grant{}, failf(ErrLeaseHeld, "agent is leased to %s until %s%s", describeHolder(c), c.expires.UTC().Format(time.RFC3339Nano), sameIdentityNote(c, who))
	}
	def := l.def
	if c != nil {
		def = c.ttl
	}
	t, err := l.clampTTL(ttl, def)
	if err != nil {
		return grant{}, err
	}
	if c == nil {
		l.gen++
		c = &lease{id: newLeaseID(), coordinator: coordinator, holder: who.name, gen: l.gen}
		l.cur = c
		l.log.Info("lease acquired", "holder", who.display(), "coordinator", coordinator, "generation", c.gen, "ttl", t)
	}
	c.ttl, c.expires = t, now.Add(t)
	l.armTimer(c)
	return grant{id: c.id, gen: c.gen, expires: c.expires, ttl: t}, nil
}

// settleLocked ends a current lease that is past its expiry (its timer not
// run yet) and waits, within ctx and the cleanup's bound, for the cleanup
// of the lease that ended last. Callers hold l.mu; it is released while
// waiting.
func (l *leases) settleLocked(ctx context.Context) error {
	for !l.closed {
		if c := l.cur; c != nil && !time.Now().Before(c.expires) {
			// Expired, its timer not run yet: end it as the timer would,
			// its cleanup in the background, and wait for that below.
			l.mu.Unlock()
			if ended := l.end(c.id, func(c *lease) bool { return !time.Now().Before(c.expires) }); ended != nil {
				go l.cleanUp(ended)
			}
			l.mu.Lock()
			continue
		}
		done, by := l.cleaning, l.cleanBy
		if done == nil {
			return nil
		}
		l.mu.Unlock()
		wait := time.NewTimer(time.Until(by))
		var err error
		select {
		case <-done:
		case <-wait.C:
		case <-ctx.Done():
			err = fmt.Errorf("acquire: waiting for the previous lease's cleanup (stop, disarm, restore): %w", ctx.Err())
		}
		wait.Stop()
		l.mu.Lock()
		if err != nil {
			return err
		}
		if l.cleaning == done && !time.Now().Before(by) {
			l.log.Warn("the previous lease's cleanup overran its bound: granting the agent anyway; the late cleanup leaves the new lease's run and tuning alone", "bound", l.cleanupBound())
			l.cleaning = nil
		}
	}
	return nil
}

// renew extends lease id of who by ttl (nil: its TTL).
func (l *leases) renew(who caller, id string, ttl *time.Duration) (grant, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.checkLocked(who, id); err != nil {
		return grant{}, err
	}
	c := l.cur
	t, err := l.clampTTL(ttl, c.ttl)
	if err != nil {
		return grant{}, err
	}
	c.ttl, c.expires = t, time.Now().Add(t)
	l.armTimer(c)
	return grant{id: c.id, gen: c.gen, expires: c.expires, ttl: t}, nil
}

// release ends lease id of who. It returns the lease it ended (nil when
// id is not the current lease: already released or expired, nothing to
// do) and done, to call once its cleanup is over: until then, or the
// cleanup's bound, no new lease is granted. Another identity is refused.
func (l *leases) release(who caller, id string) (*lease, func(), error) {
	l.mu.Lock()
	err := l.holderLocked(who)
	l.mu.Unlock()
	if err != nil {
		return nil, nil, err
	}
	c := l.end(id, func(c *lease) bool { return c.holder == who.name })
	if c == nil {
		return nil, nil, nil
	}
	return c, func() { l.cleaned(c) }, nil
}

// forceRelease ends the current lease whoever holds it: the operator's
// way out (admin.go). It returns the lease ended (nil: none) and done, as
// release does.
func (l *leases) forceRelease() (*lease, func()) {
	l.mu.Lock()
	c := l.cur
	l.mu.Unlock()
	if c == nil {
		return nil, nil
	}
	if ended := l.end(c.id, func(*lease) bool { return true }); ended != nil {
		return ended, func() { l.cleaned(ended) }
	}
	return nil, nil
}

// end takes lease id off the agent when it is current and ends(c) says
// it ends, waiting for the operations under hold to return; it returns
// the lease it ended, or nil. An ended lease's cleanup is under way (it
// counts in cleanups, and acquire waits for it) until cleaned is called.
func (l *leases) end(id string, ends func(c *lease) bool) *lease {
	defer l.lockLife()()
	l.mu.Lock()
	defer l.mu.Unlock()
	c := l.cur
	if c == nil || c.id != id || !ends(c) {
		return nil
	}
	c.timer.Stop()
	l.cur = nil
	l.cleanups.Add(1) // under l.mu: close cannot have passed its Wait
	c.cleaning = make(chan struct{})
	l.cleaning, l.cleanBy = c.cleaning, time.Now().Add(l.cleanupBound())
	return c
}

// cleaned marks the cleanup after the ended lease c over.
func (l *leases) cleaned(c *lease) {
	l.mu.Lock()
	close(c.cleaning)
	if l.cleaning == c.cleaning {
		l.cleaning = nil
	}
	l.mu.Unlock()
	l.cleanups.Done()
}

// check refuses a lease id that is not who's current, unexpired lease.
func (l *leases) check(who caller, id string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.checkLocked(who, id)
}

// hold runs fn, with the lease's generation, while lease id of who is
// current: the lease cannot end (expire, be released, be closed) until fn
// returns, but it can be renewed and read meanwhile. fn must not end a
// lease (release, close) nor call hold (a pending end would make the
// nested call wait).
func (l *leases) hold(who caller, id string, fn func(gen uint64) error) error {
	l.life.RLock()
	defer l.life.RUnlock()
	l.mu.Lock()
	err := l.checkLocked(who, id)
	var gen uint64
	if err == nil {
		gen = l.cur.gen
	}
	l.mu.Unlock()
	if err != nil {
		return err
	}
	return fn(gen)
}

// checkLocked is check; callers hold l.mu. Another identity is refused
// before the lease id is looked at, so it learns nothing of it.
func (l *leases) checkLocked(who caller, id string) error {
	if err := l.holderLocked(who); err != nil {
		return err
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

// holderLocked refuses who when another identity holds a current lease.
// Callers hold l.mu.
func (l *leases) holderLocked(who caller) error {
	if l.closed {
		return failf(ErrShuttingDown, "the agent is shutting down")
	}
	if c := l.cur; c != nil && time.Now().Before(c.expires) && c.holder != who.name {
		return failf(ErrNotHolder, "agent is leased to %s until %s: the caller (%s) does not hold the lease", describeHolder(c), c.expires.UTC().Format(time.RFC3339Nano), who.display())
	}
	return nil
}

// holder is who holds a current lease.
func (l *leases) holder() (holderInfo, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if c := l.cur; c != nil && time.Now().Before(c.expires) {
		return holderInfo{holder: c.holder, coordinator: c.coordinator, gen: c.gen, expires: c.expires}, true
	}
	return holderInfo{}, false
}

// latest is the generation of the last lease granted (0: none yet).
func (l *leases) latest() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.gen
}

// close refuses every lease from now on and drops the current one (the
// caller cleans up after it: expired is not called), then waits for the
// cleanups under way (each bounded by the cleanup's bound), so nothing of
// the agent runs on after its shutdown.
func (l *leases) close() {
	unlock := l.lockLife()
	l.mu.Lock()
	l.closed = true
	if l.cur != nil {
		l.cur.timer.Stop()
		l.cur = nil
	}
	l.mu.Unlock()
	unlock()
	l.cleanups.Wait()
}

// lockLife takes life for writing, waiting for the operations under hold
// at most the cleanup's bound: past it the lease ends anyway (a wedged
// operation cannot keep an agent leased), the operation finishing under
// an ended lease, and life is released once it has been taken. It returns
// the unlock.
func (l *leases) lockLife() (unlock func()) {
	got := make(chan struct{})
	go func() { l.life.Lock(); close(got) }()
	t := time.NewTimer(l.cleanupBound())
	defer t.Stop()
	select {
	case <-got:
		return l.life.Unlock
	case <-t.C:
		l.log.Warn("an operation under the lease outran the cleanup's bound: ending the lease without waiting for it", "bound", l.cleanupBound())
		go func() { <-got; l.life.Unlock() }()
		return func() {}
	}
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
// then, outside the locks, cleans up after it.
func (l *leases) expire(id string) {
	// A renewal re-arms the timer (armTimer stops this one), so a lease
	// still current here is one an acquire found expired or this timer's.
	if c := l.end(id, func(c *lease) bool { return !time.Now().Before(c.expires) }); c != nil {
		l.cleanUp(c)
	}
}

// cleanUp calls expired for the expired lease c, within the cleanup's
// bound, and marks its cleanup over.
func (l *leases) cleanUp(c *lease) {
	defer l.cleaned(c)
	if l.expired == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), l.cleanupBound())
	defer cancel()
	l.expired(ctx, c)
}
