package coordinator

import (
	"context"
	"errors"
	"time"

	"github.com/linerate/linerate/internal/cluster/gossip"
	"github.com/linerate/linerate/latency"
)

// reconcile balances the run's flows (reconcileRun) from what its
// senders and receivers reported.
func (st *runState) reconcile() {
	in := runCounts{
		Pairs:      st.pairs,
		Senders:    map[string]senderEnd{},
		Receivers:  map[string]receiverEnd{},
		FrameBytes: st.spec.MeanFrame(),
		OfferedPPS: float64(st.spec.Rate),
		Burst:      st.spec.Burst,
	}
	for _, n := range st.withRole(gossip.RoleSender) {
		in.Senders[n.m.Name] = senderEnd{Port: st.portOf(n.m.Name), FlowOf: n.flowOf, Report: n.sent, LinkSpeedMbps: n.host.LinkSpeedMbps}
	}
	for _, n := range st.withRole(gossip.RoleReceiver) {
		in.Receivers[n.m.Name] = receiverEnd{Dst: n.dst, Report: n.received, LinkSpeedMbps: n.host.LinkSpeedMbps, Table: n.size.MaxStreams}
		if r := n.received; r != nil {
			n.host.Uncounted = r.OverflowPackets
			for _, s := range r.Streams {
				n.host.BeyondCapacity += s.BeyondCapacity
				n.host.Unrecorded += s.Unrecorded
			}
		}
	}
	flows, warnings := reconcileRun(in)
	st.attachRTT(flows)
	st.res.Flows = append(st.res.Flows, flows...)
	st.res.Directions = directionTotals(st.res.Flows)
	st.res.Warnings = append(st.res.Warnings, warnings...)
	clocks := map[string]*Clock{}
	for _, n := range st.order {
		clocks[n.m.Name] = n.host.Clock
	}
	offsets := map[string][2]*Offset{}
	for _, n := range st.order {
		offsets[n.m.Name] = [2]*Offset{n.clock, n.clockAfter}
	}
	st.res.StartSpread = startSpreadOf(st.res.Flows, clocks, offsets)
	st.res.Warnings = append(st.res.Warnings, stateLatencyClocks(st.res.Flows, func(s, r string) (latency.Clock, float64) {
		if st.nodes[s] == nil || st.nodes[r] == nil {
			return latencyClock(clocks[s], clocks[r])
		}
		return pairClock(st.nodes[s], st.nodes[r])
	})...)
}

// finish sets the result's status from how the run ended (err: why it
// ended early) and records every host. A run whose receivers could not
// count some test packets is partial, never ok.
func (st *runState) finish(err error) {
	res := st.res
	res.Finished = time.Now().UTC()
	var f *failure
	switch {
	case err == nil && len(res.Flows) == len(st.pairs) && st.counted():
		res.Status = StatusOK
	case err == nil:
		res.Status = StatusPartial
	case errors.As(err, &f):
		res.Status, res.Error, res.FailedPhase = StatusFailed, f.Error(), f.phase
		if len(res.Flows) > 0 {
			res.Status = StatusPartial
		}
	case errors.Is(err, context.Canceled):
		res.Status, res.Error, res.FailedPhase = StatusFailed, "interrupted during phase "+st.currentPhase(), st.currentPhase()
	default:
		res.Status, res.Error, res.FailedPhase = StatusFailed, err.Error(), st.currentPhase()
	}
	for _, n := range st.order {
		h := *n.host
		if h.IRQMap == nil {
			h.IRQMap = []IRQPin{}
		}
		if h.SkippedIRQs == nil {
			h.SkippedIRQs = []SkippedIRQ{}
		}
		res.Hosts = append(res.Hosts, h)
		if w := offCPUWarning(&h); w != "" {
			res.Warnings = append(res.Warnings, w)
		}
	}
	if res.Flows == nil {
		res.Flows = []Flow{}
	}
	if res.Hosts == nil {
		res.Hosts = []Host{}
	}
}

// counted is whether every receiver counted every test packet it saw in
// a stream, with a sequence (none had sequence 0).
func (st *runState) counted() bool {
	for _, n := range st.withRole(gossip.RoleReceiver) {
		if n.host.Uncounted > 0 || n.host.BeyondCapacity > 0 || n.host.Unrecorded > 0 {
			return false
		}
	}
	return true
}
