package coordinator

import (
	"context"
	"fmt"
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

// renew keeps every lease alive at a third of its TTL; a refused renewal
// fails the run (the agent has restored itself by then).
func (st *runState) renew(ctx context.Context) {
	t := time.NewTicker(st.spec.LeaseTTL / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		for _, n := range st.order {
			cctx, cancel := context.WithTimeout(ctx, st.spec.LeaseTTL/3)
			_, err := n.c.RenewLease(cctx, &lineratev1.RenewLeaseRequest{LeaseId: n.lease, Ttl: durationpb.New(st.spec.LeaseTTL)})
			cancel()
			if err != nil && ctx.Err() == nil {
				st.fail(n.m.Name, fmt.Errorf("renew lease: %w", err))
				return
			}
		}
	}
}
