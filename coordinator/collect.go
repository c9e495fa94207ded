package coordinator

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/linerate/linerate/internal/cluster/gossip"
	"github.com/linerate/linerate/pktgen"
	lineratev1 "github.com/linerate/linerate/proto/linerate/v1"
)

// senderOverrun is how long past its own deadline a sender has before
// the coordinator stops it: the agent's watchdog stops it first (its
// deadline and a backend's 10 s to return), this is the backstop.
const senderOverrun = 30 * time.Second

// sendBound is how long after the start the senders may run before they
// are stopped: the duration, or a flow's count at its rate as the agent's
// watchdog reckons it (pktgen.Config.Deadline, one thread: never less
// than the agent's), plus senderOverrun.
func (st *runState) sendBound() time.Duration {
	if st.spec.Duration > 0 {
		return st.spec.Duration + senderOverrun
	}
	flow := pktgen.Config{CPUs: []int{0}, Count: st.spec.Count, RatePPS: st.spec.Rate}
	return flow.Deadline(0).Limit + senderOverrun
}

// wait collects every sender's result: at the end of its count or
// duration, or after Stop when the run is cut short.
func (st *runState) wait(ctx context.Context) error {
	senders := st.withRole(gossip.RoleSender)
	bound := st.sendBound()
	// A sender that outlives its count or duration by far is stopped.
	deadline := time.NewTimer(bound)
	defer deadline.Stop()
	done := make(chan struct{})
	go func() {
		select {
		case <-deadline.C:
			st.log.Warn("senders still running past their count or duration: stopping them", "after", bound)
			st.stopSenders(ctx)
		case <-done:
		case <-ctx.Done():
		}
	}()
	defer close(done)
	return st.each(ctx, senders, func(ctx context.Context, n *node) error {
		// Stopped at the bound, a sender has a call's time to answer;
		// one that never does fails the run there.
		ctx, cancel := context.WithTimeout(ctx, bound+st.r.CallTimeout)
		defer cancel()
		resp, err := n.c.Result(ctx, &lineratev1.ResultRequest{LeaseId: n.lease, Wait: true})
		if err != nil {
			return fmt.Errorf("result: %w", err)
		}
		n.sent = senderReportOf(resp.Summary)
		if n.rtt, err = senderRTTOf(resp.Rtt); err != nil {
			return fmt.Errorf("result: %w", err)
		}
		verifiedInto(n, irqVerifyOf(resp.IrqVerify), resp.IrqVerifyReason)
		if s := n.sent; s != nil {
			n.host.Sent, n.host.SendErrors, n.host.TxDropped = s.Packets, s.Errors, s.TxDropped
			n.host.Warnings = append(n.host.Warnings, s.Warnings...)
			if s.Backend != "" {
				n.host.Backend = s.Backend
			}
			n.host.BackendNotes = s.Notes
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
	if n.received, err = receiverReportOf(resp.Report); err != nil {
		return err
	}
	verifiedInto(n, irqVerifyOf(resp.IrqVerify), resp.IrqVerifyReason)
	if rp := n.received; rp != nil {
		n.host.Received = rp.Packets - min(rp.OtherPackets, rp.Packets) // test packets only
		n.host.OtherFrames = rp.OtherPackets
		n.host.HostDrops = rp.HostDrops()
		if n.host.Method == "" {
			n.host.Method, n.host.XDPMode = string(rp.Method), rp.XDPMode
		}
	}
	return nil
}
