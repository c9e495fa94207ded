package coordinator

import (
	"context"
	"fmt"
	"slices"

	"github.com/linerate/linerate/pktgen"
	lineratev1 "github.com/linerate/linerate/proto/linerate/v1"
)

// flowsOf are the indexes of st.pairs that n sends.
func (st *runState) flowsOf(n *node) []int {
	var out []int
	for i, p := range st.pairs {
		if p.Sender == n.m.Name {
			out = append(out, i)
		}
	}
	return out
}

// sending are the names of the run's hosts that send, in run order: the
// named senders, then the named receivers that send (--bidir, --reverse).
func (st *runState) sending() []string {
	var out []string
	for _, n := range st.order {
		if n.role.Sends() {
			out = append(out, n.m.Name)
		}
	}
	return out
}

// portOf is the UDP destination port of a sender's streams: with the
// destination and the per-thread source it names each stream uniquely.
// Every sending host has a port of its own, so in a run both ways a
// host's flows each way, and the streams every receiver counts, never
// share one.
func (st *runState) portOf(sender string) int {
	return st.spec.BasePort + slices.Index(st.sending(), sender)
}

// senderOfPort is the sender whose streams go to UDP port ("": none of
// the run's).
func (st *runState) senderOfPort(port uint32) string {
	for _, s := range st.sending() {
		if uint32(st.portOf(s)) == port {
			return s
		}
	}
	return ""
}

// configure plans sender n's threads over its flows and hands the agent
// the configuration. A plan that needs more threads than n has places
// for is one error naming the limit, before the agent sees it.
func (st *runState) configure(ctx context.Context, n *node) error {
	flows := st.flowsOf(n)
	slots := slotsOf(n.host.IRQMap, n.nic.localCPUs, st.perQueue(n))
	if off := st.sharedKernelOffset(n) % len(slots); off > 0 {
		slots = append(slots[off:], slots[:off]...)
	}
	tuned := len(n.host.IRQMap) > 0
	perFlow := st.perFlow(n, false)
	what := "CPUs"
	if tuned {
		what = "tuned queues"
	}
	if err := threadLimit(n.m.Name, what, len(slots), len(flows), perFlow, st.spec.Threads); err != nil {
		return err
	}
	if st.spec.Threads == 0 && len(flows) == 1 && tuned && perFlow < len(slots) {
		n.host.Warnings = append(n.host.Warnings, fmt.Sprintf("rate %d pps per flow: %d threads, not one per each of %d tuned queues (at least 1 pps per thread)", st.spec.Rate, perFlow, len(slots)))
	}
	p := sendPlan{
		threads:  planThreads(flows, perFlow, slots, st.spec.Count, st.spec.burstUnit(), st.spec.Rate),
		frame:    st.spec.FrameSize - pktgen.FCSBytes,
		imix:     st.spec.IMIX,
		duration: st.spec.Duration,
		port:     uint32(st.portOf(n.m.Name)),
		backend:  st.spec.Backend,
		xmit:     st.spec.XmitMode,
		surface:  st.spec.surface(),
		wakeup:   st.spec.senderWakeup(),
		vlan:     st.spec.VLAN,
	}
	n.flowOf = p.threads.flowOf
	first := st.nodes[st.pairs[flows[0]].Receiver]
	p.dst = endpoint{ip: first.dst, mac: first.nic.mac}
	if len(flows) > 1 {
		for _, f := range p.threads.flowOf {
			r := st.nodes[st.pairs[f].Receiver]
			p.perDst = append(p.perDst, endpoint{ip: r.dst, mac: r.nic.mac})
		}
	}
	resp, err := unary(ctx, st, "configure", n.c.Configure, &lineratev1.ConfigureRequest{LeaseId: n.lease, Config: senderConfig(p), Rtt: st.rttStream(n)})
	if err != nil {
		return err
	}
	configuredInto(n.host, resp)
	for _, c := range p.threads.cpus {
		n.host.CPUs = append(n.host.CPUs, int(c))
	}
	return nil
}

// sharedKernelOffset is where untuned sender n's threads start among its
// CPUs: senders of the run on one kernel (one boot id: the lab's
// namespaces) share its CPUs, so each one's threads start after those of
// the senders before it (in the spec's order) instead of all on the first
// CPU, where they would take turns at sending and at starting. 0 for a
// tuned sender (its places are its queues') or one alone on its kernel.
func (st *runState) sharedKernelOffset(n *node) int {
	boot := func(o *node) string {
		if o.host.Clock == nil || len(o.host.IRQMap) > 0 {
			return ""
		}
		return o.host.Clock.BootID
	}
	b := boot(n)
	if b == "" {
		return 0
	}
	off := 0
	for _, name := range st.sending() {
		if name == n.m.Name {
			break
		}
		if o := st.nodes[name]; o != nil && boot(o) == b {
			off += len(st.flowsOf(o)) * st.perFlow(o, false)
		}
	}
	return off
}

// checkThreads refuses, before anything is leased or tuned, a plan that
// needs more threads on sender n than its NIC has local CPUs (Describe's;
// tuning pins at most one queue per local CPU, so this bounds both), or,
// for kernel pktgen on a host it will tune, queues.
func (st *runState) checkThreads(_ context.Context, n *node) error {
	flows := st.flowsOf(n)
	slots := slotsOf(nil, n.nic.localCPUs, false)
	if st.perQueue(n) {
		slots = make([]pktgen.Slot, max(len(slots), n.nic.queues))
	}
	perFlow := max(st.spec.Threads, 1)
	return threadLimit(n.m.Name, "CPUs", len(slots), len(flows), perFlow, st.spec.Threads)
}

// perQueue tells whether sender n's threads are one per tuned queue, CPUs
// repeating: kernel pktgen (given, or what "auto" picks where the agent
// offers it), paced, on a host the run tunes. A userspace backend runs
// one thread per CPU, and so does kernel pktgen unpaced
// (pktgen.KernelPerQueue).
func (st *runState) perQueue(n *node) bool {
	if st.spec.NoTune || !n.nic.queueIRQs || st.spec.HasQueueMap {
		return false // a queue map: every thread sends on its range
	}
	kernel := st.spec.Backend == pktgen.BackendKernel || (st.spec.Backend == pktgen.BackendAuto && n.nic.kernelPktgen)
	return pktgen.KernelPerQueue(kernel, st.spec.Rate > 0)
}
