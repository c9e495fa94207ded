package coordinator

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/linerate/linerate/internal/gossip"
	lineratev1 "github.com/linerate/linerate/proto/linerate/v1"
)

// wait collects every sender's result: at the end of its count or
// duration, or after Stop when the run is cut short.
func (st *runState) wait(ctx context.Context) error {
	senders := st.withRole(gossip.RoleSender)
	var deadline <-chan time.Time
	if st.spec.Duration > 0 {
		// A sender that outlives its duration by far is stopped.
		t := time.NewTimer(st.spec.Duration + 30*time.Second)
		defer t.Stop()
		deadline = t.C
	}
	done := make(chan struct{})
	go func() {
		select {
		case <-deadline:
			st.log.Warn("senders still running past their duration: stopping them")
			st.stopSenders(ctx)
		case <-done:
		case <-ctx.Done():
		}
	}()
	defer close(done)
	return st.each(ctx, senders, func(ctx context.Context, n *node) error {
		if st.spec.Duration > 0 {
			// Stopped at duration + 30 s, a sender has a call's time to
			// answer; one that never does fails the run there. (A run by
			// count has no such bound: its lease renewals fail the run
			// when the agent stops answering.)
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, st.spec.Duration+30*time.Second+st.r.CallTimeout)
			defer cancel()
		}
		resp, err := n.c.Result(ctx, &lineratev1.ResultRequest{LeaseId: n.lease, Wait: true})
		if err != nil {
			return fmt.Errorf("result: %w", err)
		}
		n.sent = senderReportOf(resp.Summary)
		verifiedInto(n, resp.IrqVerify, resp.IrqVerifyReason)
		if s := n.sent; s != nil {
			n.host.Sent, n.host.SendErrors, n.host.TxDropped = s.Packets, s.Errors, s.TxDropped
			n.host.Warnings = append(n.host.Warnings, s.Warnings...)
			if s.Backend != "" {
				n.host.Backend = s.Backend
			}
		}
		return nil
	})
}

// stopSenders stops every leased sender once (the others have nothing to
// stop).
func (st *runState) stopSenders(ctx context.Context) {
	var wg sync.WaitGroup
	for _, n := range st.withRole(gossip.RoleSender) {
		if st.leaseOf(n) == "" {
			continue
		}
		wg.Go(func() {
			n.stopOnce.Do(func() {
				cctx, cancel := context.WithTimeout(ctx, callBudget(n, 10*time.Second))
				defer cancel()
				if _, err := n.c.Stop(cctx, &lineratev1.StopRequest{LeaseId: n.lease}); err != nil {
					st.log.Warn("stop sender", "agent", n.m.Name, "error", err)
				}
			})
		})
	}
	wg.Wait()
}

// collect takes receiver n's per-stream counts.
func (st *runState) collect(ctx context.Context, n *node) error {
	resp, err := unary(ctx, st, "collect", n.c.Collect, &lineratev1.CollectRequest{LeaseId: n.lease})
	if err != nil {
		return err
	}
	n.received = receiverReportOf(resp.Report)
	verifiedInto(n, resp.IrqVerify, resp.IrqVerifyReason)
	if rp := n.received; rp != nil {
		n.host.Received = rp.Packets - min(rp.OtherPackets, rp.Packets) // test packets only
		n.host.OtherFrames = rp.OtherPackets
		n.host.HostDrops = rp.HostDrops
		if n.host.Method == "" {
			n.host.Method = rp.Method
		}
	}
	return nil
}
