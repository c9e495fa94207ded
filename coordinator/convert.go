package coordinator

import (
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/linerate/linerate/internal/cluster/gossip"
	"github.com/linerate/linerate/latency"
	"github.com/linerate/linerate/pktgen"
	lineratev1 "github.com/linerate/linerate/proto/linerate/v1"
	recv "github.com/linerate/linerate/receiver"
	"github.com/linerate/linerate/topology"
)

// This file (with convert_lease.go) is the run's proto edge: every Agent
// service message the coordinator reads becomes a type of the project
// here, the data plane's own where it has one (a receiver's report is a
// receiver.Report, a sender's summary a pktgen.Summary), and the one
// message it composes from its own types (the sender's configuration) is
// built here. The phases work on what these return.

// nicFacts is what a run needs of an agent's data interface beyond what
// its Host records: where to send to and where threads may run.
type nicFacts struct {
	present   bool // the agent described a data interface
	mac       string
	dataIPs   []netip.Addr
	localCPUs []int
	queueIRQs bool // some queue has an IRQ of its own (not a virtual device)
	queues    int  // queues with an IRQ of their own
	// kernelPktgen: the agent offers the kernel backend (pktgen).
	kernelPktgen bool
	// receiverMemory is the receiver's memory budget for sequence state
	// in bytes (0: not announced).
	receiverMemory uint64
}

// describeInto records an agent's Describe answer in h and returns the
// interface facts the run plans with.
func describeInto(h *Host, d *lineratev1.DescribeResponse) nicFacts {
	h.Kernel = d.Kernel
	if c := d.Clock; c != nil {
		h.Clock = &Clock{Synchronised: c.Synchronised, EstErrorUS: c.EstErrorUs, MaxErrorUS: c.MaxErrorUs, BootID: c.BootId, Error: c.Error}
	}
	nic := d.Nic
	if nic == nil {
		return nicFacts{}
	}
	h.Iface, h.Driver, h.NUMANode, h.LinkSpeedMbps = nic.Iface, nic.Driver, int(nic.NumaNode), nic.LinkSpeedMbps
	h.Firmware, h.Model, h.PCI = nic.Firmware, nic.Model, nic.Pci
	h.SkippedIRQs = append(h.SkippedIRQs, skippedIRQs(nic.Skipped)...)
	f := nicFacts{present: true, mac: nic.Mac, receiverMemory: d.ReceiverMemoryBytes}
	for _, ip := range nic.DataIps {
		if a, err := netip.ParseAddr(ip); err == nil {
			f.dataIPs = append(f.dataIPs, a)
		}
	}
	for _, c := range nic.LocalCpus {
		f.localCPUs = append(f.localCPUs, int(c))
	}
	for _, q := range nic.Queues {
		if q.Irq > 0 {
			f.queueIRQs = true
			f.queues++
		}
	}
	f.kernelPktgen = slices.Contains(d.Backends, string(pktgen.BackendKernel))
	return f
}

// tunedInto records an agent's Tune answer in h: the IRQ map as applied
// (replacing what Describe skipped with what Tune skipped), the plan's
// notes and the warnings.
func tunedInto(h *Host, t *lineratev1.TuneResponse) {
	h.NUMANode = int(t.NumaNode)
	h.IRQMap = append(h.IRQMap, irqPins(t.IrqMap)...)
	h.Notes = append(h.Notes, t.Notes...)
	h.ManagedIRQs = append(h.ManagedIRQs, irqPins(t.Managed)...)
	h.SkippedIRQs = skippedIRQs(t.Skipped)
	h.Warnings = append(h.Warnings, t.Warnings...)
	fixedInto(h, t)
}

func irqPins(ms []*lineratev1.IrqMapping) []IRQPin {
	var out []IRQPin
	for _, m := range ms {
		out = append(out, IRQPin{Queue: int(m.Queue), IRQ: int(m.Irq), CPU: int(m.Cpu), Name: m.Name, Dir: m.Dir})
	}
	return out
}

func skippedIRQs(ss []*lineratev1.SkippedIrq) []SkippedIRQ {
	var out []SkippedIRQ
	for _, s := range ss {
		out = append(out, SkippedIRQ{IRQ: int(s.Irq), Name: s.Name, Reason: s.Reason})
	}
	return out
}

// irqVerifyOf is an agent's irq_verify as the result records it (nil:
// none).
func irqVerifyOf(p *lineratev1.IrqVerify) *topology.VerifyResult {
	if p == nil {
		return nil
	}
	v := &topology.VerifyResult{Iface: p.Iface, Interval: p.Interval, OffCPU: int(p.OffCpu), IRQs: []topology.VerifiedIRQ{}}
	for _, q := range p.Irqs {
		fired := make(map[string]uint64, len(q.Fired))
		for cpu, n := range q.Fired {
			fired[strconv.Itoa(int(cpu))] = n
		}
		v.IRQs = append(v.IRQs, topology.VerifiedIRQ{
			IRQ: int(q.Irq), Name: q.Name, Queue: int(q.Queue), Planned: q.Planned, Source: q.Source,
			Fired: fired, Total: q.Total, OffCPU: q.OffCpu, Note: q.Note,
		})
	}
	return v
}

// armedInto records the receiver method an agent armed.
func armedInto(h *Host, a *lineratev1.ArmResponse) {
	h.Method, h.MethodReason, h.XDPMode = a.Method, a.MethodReason, a.XdpMode
}

// configuredInto records what an agent made of its sender configuration.
func configuredInto(h *Host, r *lineratev1.ConfigureResponse) {
	h.Backend = r.Backend
	h.Warnings = append(h.Warnings, r.Warnings...)
}

// releasedInto records what an agent said as it released its lease.
func releasedInto(h *Host, r *lineratev1.ReleaseLeaseResponse) {
	h.Warnings = append(h.Warnings, r.Warnings...)
}

// sendPlan is everything one sender is configured with.
type sendPlan struct {
	threads  threadPlan
	frame    int // packet bytes without FCS; with an imix, 0
	imix     pktgen.IMIX
	duration time.Duration
	dst      endpoint   // the first flow's receiver
	perDst   []endpoint // each thread's receiver, when it sends several flows
	port     uint32     // UDP destination port of all its streams
	backend  pktgen.BackendName
	xmit     pktgen.XmitMode
	surface  surface // burst, clone_skb, source ports, queue map, node
	wakeup   pktgen.NeedWakeup
	vlan     int // 802.1Q VLAN id every frame is tagged with; 0: untagged
}

// endpoint is where a stream goes: a receiver's data address and MAC.
type endpoint struct {
	ip  netip.Addr
	mac string
}

// senderConfig is the Agent service's configuration for p.
func senderConfig(p sendPlan) *lineratev1.SenderConfig {
	pkt := int32(p.frame)
	var imix []*lineratev1.ImixEntry
	for _, e := range p.imix {
		imix, pkt = append(imix, &lineratev1.ImixEntry{Size: int32(e.PktSize()), Weight: int32(e.Weight)}), 0
	}
	cfg := &lineratev1.SenderConfig{
		Imix:         imix,
		Cpus:         p.threads.cpus,
		Queues:       p.threads.queues,
		Counts:       p.threads.counts,
		PktSize:      pkt,
		RatesPps:     p.threads.rates,
		DstMin:       p.dst.ip.String(),
		DstMac:       p.dst.mac,
		SrcPerThread: true,
		UdpDstMin:    p.port,
		UdpDstMax:    p.port,
		Backend:      string(p.backend),
		XmitMode:     string(p.xmit),
		NeedWakeup:   string(p.wakeup),
	}
	if p.duration > 0 {
		cfg.Duration = durationpb.New(p.duration)
	}
	p.surface.into(cfg)
	if p.vlan != 0 {
		vlan := uint32(p.vlan)
		cfg.VlanId = &vlan
	}
	for _, d := range p.perDst {
		cfg.ThreadDst = append(cfg.ThreadDst, &lineratev1.ThreadDest{Ip: d.ip.String(), Mac: d.mac})
	}
	return cfg
}

// senderReportOf is a sender's summary (nil: none).
func senderReportOf(s *lineratev1.SenderSummary) *senderReport {
	if s == nil {
		return nil
	}
	r := &senderReport{TxDropped: s.TxDropped, Summary: pktgen.Summary{
		Backend: s.Backend, Device: s.Device, Packets: s.Packets, Errors: s.Errors, USec: s.Usec, PPS: s.Pps,
		L2BPS: s.L2Bps, L1BPS: s.L1Bps, FrameBytes: s.FrameBytes, Warnings: s.Warnings, Interrupted: s.Interrupted,
		Notes: s.Notes,
	}}
	for _, t := range s.Threads {
		r.Threads = append(r.Threads, pktgen.ThreadSummary{
			CPU: int(t.Cpu), Entry: t.Entry, Src: t.Src, Packets: t.Packets, Errors: t.Errors, USec: t.Usec, PPS: t.Pps,
			FirstFrameNs: t.FirstFrameUnixNs, PacingWaitUSec: t.PacingWaitUsec,
		})
	}
	return r
}

// receiverReportOf is a receiver's report (nil: none). A stream address
// the agent sent is an address or empty (unknown); anything else fails,
// naming the stream.
func receiverReportOf(p *lineratev1.ReceiverReport) (*recv.Report, error) {
	if p == nil {
		return nil, nil
	}
	r := &recv.Report{
		Method: recv.Method(p.Method), MethodReason: p.MethodReason, XDPMode: p.XdpMode, Packets: p.Packets, OtherPackets: p.OtherPackets,
		RingDrops: p.RingDrops, OverflowPackets: p.OverflowPackets, Window: p.Window,
	}
	if l := p.Link; l != nil {
		r.Link = recv.LinkCounters{
			RxPackets: l.RxPackets, RxDropped: l.RxDropped, RxMissed: l.RxMissed, RxFifo: l.RxFifo,
			XDPPackets: l.XdpPackets, XDPDrops: l.XdpDrops,
		}
	}
	for i, s := range p.Streams {
		rs, err := streamReportOf(s)
		if err != nil {
			return nil, fmt.Errorf("receiver report: streams[%d]%w", i, err)
		}
		r.Streams = append(r.Streams, rs)
	}
	return r, nil
}

// streamReportOf is one stream's counts as an agent sent them; an error
// names the field (".src: …") for the caller to prefix with the stream.
func streamReportOf(s *lineratev1.StreamReport) (recv.StreamReport, error) {
	src, err := streamAddr(s.Src)
	if err != nil {
		return recv.StreamReport{}, fmt.Errorf(".src: %w", err)
	}
	dst, err := streamAddr(s.Dst)
	if err != nil {
		return recv.StreamReport{}, fmt.Errorf(".dst: %w", err)
	}
	rs := recv.StreamReport{
		Src: src, Dst: dst, DstPort: uint16(s.DstPort), Received: s.Received, Duplicates: s.Duplicates,
		Reordered: s.Reordered, MaxSeq: s.MaxSeq, Missing: s.Missing, MissingRangesFrom: s.MissingRangesFrom,
		Late: s.Late, Unrecorded: s.Unrecorded, BeyondCapacity: s.BeyondCapacity, FirstArrivalNs: s.FirstArrivalUnixNs,
		Reflected: s.Reflected,
	}
	for _, m := range s.MissingRanges {
		rs.MissingRanges = append(rs.MissingRanges, [2]uint64{m.From, m.To})
	}
	for _, q := range s.Queues {
		rs.Queues = append(rs.Queues, recv.QueuePackets{Queue: q.Queue, Packets: q.Packets})
	}
	if rs.Latency, err = latencyFromProto(s.Latency); err != nil {
		return recv.StreamReport{}, fmt.Errorf(".latency: %w", err)
	}
	return rs, nil
}

// latencyFromProto is a stream's delays as an agent sent them (nil:
// latency off, or an agent that predates it); a bucket that is not one of
// the layout's, or a clock that is not one of latency.Clocks, is an
// error.
func latencyFromProto(p *lineratev1.Latency) (*latency.Latency, error) {
	if p == nil {
		return nil, nil
	}
	clock, err := latency.ParseClock("clock", p.Clock)
	if err != nil {
		return nil, err
	}
	l := &latency.Latency{Clock: clock, ClockErrorUs: p.ClockErrorUs}
	l.Negative, l.Absurd, l.SumUs, l.MinUs, l.MaxUs = p.Negative, p.Absurd, p.SumUs, p.MinUs, p.MaxUs
	l.Jitter16, l.JitterN = p.Jitter16, p.JitterDiffs
	for _, b := range p.Buckets {
		if b.LoUs >= latency.AbsurdUs {
			return nil, fmt.Errorf("bucket at %d µs: past the histogram's top (%d µs)", b.LoUs, uint64(latency.AbsurdUs))
		}
		i := latency.Bucket(b.LoUs)
		if lo, _ := latency.BucketRange(i); lo != b.LoUs {
			return nil, fmt.Errorf("bucket at %d µs: not a bucket's lowest value (the bucket holding it starts at %d µs)", b.LoUs, lo)
		}
		l.Counts[i] += b.Count
	}
	return l, nil
}

// streamAddr is a stream's address as an agent sends it: an IPv4 or IPv6
// address, or empty when the agent had none (the zero Addr).
func streamAddr(s string) (netip.Addr, error) {
	if s == "" {
		return netip.Addr{}, nil
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Addr{}, fmt.Errorf("%q: want an IPv4 or IPv6 address", s)
	}
	return a, nil
}

// sampleOf is one Watch message as a sample of agent's counters in role
// (ok false: the message has nothing for that role); a receiver's
// streams' delays are merged per flow, whose sender senderOf names from
// a stream's UDP port ("": not a flow of the run; left out).
func sampleOf(resp *lineratev1.WatchResponse, agent string, role gossip.Role, senderOf func(port uint32) string) (s Sample, ok bool) {
	s = Sample{Event: EventSample, Time: resp.Time.AsTime().UTC(), Agent: agent, Role: string(role)}
	switch {
	case role == gossip.RoleSender && resp.Sender != nil:
		s.Phase, s.Packets, s.Errors = phaseName(resp.Sender.Phase), resp.Sender.Packets, resp.Sender.Errors
	case role == gossip.RoleReceiver && resp.Receiver != nil:
		s.Phase, s.Packets, s.Errors = phaseName(resp.Receiver.Phase), resp.Receiver.Packets, resp.Receiver.Errors
		s.Latency = liveLatency(resp.Receiver.Streams, senderOf)
	default:
		return Sample{}, false
	}
	return s, true
}

// liveLatency merges a live sample's streams' delays per flow, in the
// order their senders first appear.
func liveLatency(streams []*lineratev1.StreamCounters, senderOf func(port uint32) string) []FlowLatency {
	var order []string
	by := map[string]*latency.Histogram{}
	for _, st := range streams {
		sender := senderOf(st.DstPort)
		l, err := latencyFromProto(st.Latency)
		if sender == "" || l == nil || err != nil {
			continue
		}
		if by[sender] == nil {
			by[sender] = &latency.Histogram{}
			order = append(order, sender)
		}
		by[sender].Add(&l.Histogram)
	}
	var out []FlowLatency
	for _, sender := range order {
		m := by[sender].Summary()
		out = append(out, FlowLatency{Sender: sender, Samples: m.Samples, P50US: m.P50Us, P99US: m.P99Us})
	}
	return out
}

// sendFailed tells whether a Watch message says the agent's sender
// failed, and why.
func sendFailed(resp *lineratev1.WatchResponse) (why string, failed bool) {
	if resp.Sender == nil || resp.Sender.Phase != lineratev1.Phase_PHASE_FAILED {
		return "", false
	}
	return resp.Sender.Error, true
}

func phaseName(p lineratev1.Phase) string {
	return strings.ToLower(strings.TrimPrefix(p.String(), "PHASE_"))
}
