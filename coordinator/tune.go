package coordinator

import (
	"context"

	lineratev1 "github.com/linerate/linerate/proto/linerate/v1"
	"github.com/linerate/linerate/topology"
)

// tune pins n's queue IRQs (a sender's to as many CPUs as it runs
// threads: --threads for each of its flows), unless the spec says not to
// or the device has no queue IRQs. A host that both sends and receives
// is tuned once, for its sending, as every host is restored once.
func (st *runState) tune(ctx context.Context, n *node) error {
	switch {
	case st.spec.NoTune:
		n.host.Tuned = "not tuned: --no-tune"
		return nil
	case !n.nic.queueIRQs:
		n.host.Tuned = "not tuned: " + topology.NoQueueIRQs
		return nil
	}
	threads := 0
	if n.role.Sends() {
		threads = st.spec.Threads * len(st.flowsOf(n))
	}
	t, err := unary(ctx, st, "tune", n.c.Tune, &lineratev1.TuneRequest{LeaseId: n.lease, Threads: int32(threads), Irqbalance: string(st.spec.IRQBalance)})
	if err != nil {
		return err
	}
	n.host.Tuned = "applied"
	tunedInto(n.host, t)
	return nil
}
