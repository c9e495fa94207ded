package coordinator

import (
	"context"

	"github.com/linerate/linerate/latency"
	lineratev1 "github.com/linerate/linerate/proto/linerate/v1"
)

// arm makes receiver n count the run's streams from now on, its stream
// table and sequence window sized from the plan (sizeReceiver).
func (st *runState) arm(ctx context.Context, n *node) error {
	n.size = st.sizeOf(n, false)
	if err := n.size.check(n.nic.receiverMemory); err != nil {
		return err
	}
	reflect := st.reflectPorts(n)
	var reflectVLAN uint32
	if len(reflect) > 0 {
		reflectVLAN = uint32(st.spec.VLAN)
	}
	resp, err := unary(ctx, st, "arm", n.c.Arm, &lineratev1.ArmRequest{
		LeaseId: n.lease, Method: string(st.spec.Method),
		MaxStreams: uint32(n.size.MaxStreams), Window: n.size.Window,
		Repeats: uint32(st.spec.Copies()), SeqStride: uint32(st.spec.Copies()),
		ClockCorrections: st.corrections(n),
		Latency:          string(st.receiverLatency()), ReflectPorts: reflect, ReflectVlan: reflectVLAN,
		NeedWakeup: string(st.spec.receiverWakeup()),
	})
	if err != nil {
		return err
	}
	armedInto(n.host, resp)
	return nil
}

// corrections are what receiver n adds to the delays from each of its
// senders whose clock and its own are related only by the offsets the
// run measured (pairClock: estimated), by the sender's UDP port.
func (st *runState) corrections(n *node) []*lineratev1.ClockCorrection {
	var out []*lineratev1.ClockCorrection
	for _, p := range st.pairs {
		s := st.nodes[p.Sender]
		if p.Receiver != n.m.Name || s == nil {
			continue
		}
		if c, _ := pairClock(s, n); c == latency.Estimated {
			out = append(out, &lineratev1.ClockCorrection{DstPort: uint32(st.portOf(s.m.Name)), AddNs: int64(correction(s, n))})
		}
	}
	return out
}

// checkMemory refuses, before anything is leased, a plan whose sequence
// state on receiver n is over the budget its agent announced. The
// senders are not tuned yet: each is taken to run one thread per local
// CPU where tuning would give it one per queue, at least as many as it
// will run.
func (st *runState) checkMemory(_ context.Context, n *node) error {
	return st.sizeOf(n, true).check(n.nic.receiverMemory)
}

// sizeOf sizes receiver n from the flows sent to it; beforeTune
// estimates the senders' threads from Describe (see checkMemory).
func (st *runState) sizeOf(n *node, beforeTune bool) receiverSize {
	flows := loadsTo(st.pairs, n.m.Name, func(sender string) (int, int64) {
		s := st.nodes[sender]
		return st.perFlow(s, beforeTune), minPositive(s.host.LinkSpeedMbps, n.host.LinkSpeedMbps)
	})
	return sizeReceiver(st.spec, flows)
}

// perFlow is how many threads sender n runs for each of its flows
// (threadsPerFlow): over its tuned queues, or, beforeTune, over every
// local CPU when it has queues tuning would pin.
func (st *runState) perFlow(n *node, beforeTune bool) int {
	slots := len(slotsOf(n.host.IRQMap, n.nic.localCPUs, st.perQueue(n)))
	tuned := len(n.host.IRQMap) > 0
	if beforeTune {
		slots, tuned = len(slotsOf(nil, n.nic.localCPUs, false)), !st.spec.NoTune && n.nic.queueIRQs
		if st.perQueue(n) {
			slots = max(slots, n.nic.queues) // one device per queue it will tune
		}
	}
	return threadsPerFlow(st.spec.Threads, len(st.flowsOf(n)), tuned, slots, st.spec.Rate, st.spec.Count/st.spec.burstUnit())
}
