package coordinator

import (
	"context"
	"fmt"
	"sync"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"

	lineratev1 "github.com/linerate/linerate/proto/linerate/v1"
)

// acquire leases n for this run: until the lease is released or expires,
// no other coordinator can drive it.
func (st *runState) acquire(ctx context.Context, n *node) error {
	resp, err := unary(ctx, st, "acquire lease", n.c.AcquireLease, &lineratev1.AcquireLeaseRequest{CoordinatorId: st.r.ID + "/" + st.res.RunID, Ttl: durationpb.New(st.spec.LeaseTTL)})
	if err != nil {
		return err
	}
	st.mu.Lock()
	n.lease = resp.LeaseId
	st.mu.Unlock()
	return nil
}

// heldLease is a lease another coordinator holds on an agent, as its
// Describe shows it: the holder's certificate name (empty under
// --insecure), its coordinator_id and the lease's expiry.
type heldLease struct {
	holder, coordinatorID string
	expires               time.Time
}

// leasedElsewhere refuses, at describe, an agent another coordinator
// holds (l: nil when free), naming the holder's certificate and the
// lease's expiry, before this run leases any agent.
func leasedElsewhere(l *heldLease) error {
	if l == nil {
		return nil
	}
	who := fmt.Sprintf("certificate %q", l.holder)
	if l.holder == "" {
		who = "a coordinator with no certificate identity (--insecure)"
	}
	return fmt.Errorf("describe: leased to %s (coordinator_id %q) until %s: wait for that run to end; the agent host's operator can end it with `linerate agent release`",
		who, l.coordinatorID, l.expires.UTC().Format(time.RFC3339))
}

// renew keeps every lease alive: one goroutine per agent renews its lease
// at a third of its TTL, each call bounded by a third of the TTL, so a
// slow or silent agent holds up no other's renewal. A refused or failed
// renewal fails the run naming the agent (which restores itself once its
// lease runs out).
func (st *runState) renew(ctx context.Context) {
	var wg sync.WaitGroup
	for _, n := range st.order {
		wg.Go(func() { st.renewOne(ctx, n) })
	}
	wg.Wait()
}

// renewOne renews n's lease until ctx ends or a renewal fails.
func (st *runState) renewOne(ctx context.Context, n *node) {
	every := st.spec.LeaseTTL / 3
	t := time.NewTicker(every)
	defer t.Stop()
	lease := st.leaseOf(n)
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		cctx, cancel := context.WithTimeout(ctx, every)
		_, err := n.c.RenewLease(cctx, &lineratev1.RenewLeaseRequest{LeaseId: lease, Ttl: durationpb.New(st.spec.LeaseTTL)})
		cancel()
		if err != nil && ctx.Err() == nil {
			st.fail(n.m.Name, fmt.Errorf("renew lease: %w", err))
			return
		}
	}
}
