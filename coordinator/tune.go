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
//
// With --preflight fix the fixes of the host's checks go with the Tune
// (fix_only where the IRQs are not tuned), applied before the IRQs are
// pinned and restored with them.
func (st *runState) tune(ctx context.Context, n *node) error {
	fixes := st.fixClasses(n)
	switch {
	case st.spec.NoTune:
		n.host.Tuned = "not tuned: --no-tune"
	case !n.nic.queueIRQs:
		n.host.Tuned = "not tuned: " + topology.NoQueueIRQs
	default:
		threads := 0
		if n.role.Sends() {
			threads = st.spec.Threads * len(st.flowsOf(n))
		}
		t, err := unary(ctx, st, "tune", n.c.Tune, &lineratev1.TuneRequest{
			LeaseId: n.lease, Threads: int32(threads), Irqbalance: string(st.spec.IRQBalance), FixClasses: fixes, Addrs: st.testAddrs(),
		})
		if err != nil {
			return err
		}
		n.host.Tuned = "applied"
		tunedInto(n.host, t)
		st.settle(ctx, n)
		return nil
	}
	if len(fixes) == 0 {
		return nil
	}
	t, err := unary(ctx, st, "tune (fixes)", n.c.Tune, &lineratev1.TuneRequest{LeaseId: n.lease, FixClasses: fixes, FixOnly: true, Addrs: st.testAddrs()})
	if err != nil {
		return err
	}
	fixedInto(n.host, t)
	st.settle(ctx, n)
	return nil
}
