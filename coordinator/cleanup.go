package coordinator

import (
	"context"
	"fmt"
	"sync"
	"time"

	lineratev1 "github.com/linerate/linerate/proto/linerate/v1"
)

// cleanup stops, restores and releases every leased agent and closes
// every connection, whatever state the run ended in, with its own time
// budget (the run's context may be cancelled).
func (st *runState) cleanup() {
	prev := st.currentPhase()
	st.setPhase(PhaseRestore)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st.stopSenders(ctx)
	var wg sync.WaitGroup
	for _, n := range st.order {
		lease := st.leaseOf(n)
		if lease == "" {
			continue
		}
		wg.Go(func() {
			cctx, cancel := context.WithTimeout(ctx, callBudget(n, 15*time.Second))
			defer cancel()
			resp, err := n.c.ReleaseLease(cctx, &lineratev1.ReleaseLeaseRequest{LeaseId: lease, KeepTuning: st.spec.KeepTuning})
			switch {
			case err != nil:
				n.host.Warnings = append(n.host.Warnings, fmt.Sprintf("release lease: %v (the agent restores when the lease expires or it restarts)", err))
			case n.host.Tuned == "applied" && st.spec.KeepTuning:
				n.host.Tuned = "kept"
			case n.host.Tuned == "applied":
				n.host.Tuned = "restored"
			}
			if resp != nil {
				releasedInto(n.host, resp)
			}
			if err == nil && len(n.host.Fixed) > 0 && !st.spec.KeepTuning {
				// Every fixed setting the agent said it restored; one it
				// skipped is among its warnings, with why.
				n.host.FixesRestored = fixesRestored(n.host.Fixed, resp)
				if !n.host.FixesRestored && len(resp.GetSettings()) == 0 {
					n.host.Warnings = append(n.host.Warnings, "its agent did not say whether the fixed settings were restored (an agent that predates the answer): check them with linerate doctor")
				}
			}
		})
	}
	wg.Wait()
	for _, n := range st.order {
		if n.conn != nil {
			_ = n.conn.Close()
		}
	}
	st.phase.Store(prev) // a failure names the phase it happened in
}

// goneBudget bounds a cleanup call to a host the run lost: one that
// vanished cannot answer, and a full budget per call would hold the
// run's end for tens of seconds; one gossip merely declared failed still
// answers at once.
const goneBudget = time.Second

// callBudget is a cleanup call's time budget for n: full, or goneBudget
// when the run lost n.
func callBudget(n *node, full time.Duration) time.Duration {
	if n.gone.Load() {
		return min(full, goneBudget)
	}
	return full
}
