package agent

import (
	"fmt"
	"net"
	"net/netip"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/linerate/linerate/internal/cluster/gossip"
	"github.com/linerate/linerate/internal/enum"
	"github.com/linerate/linerate/latency"
	"github.com/linerate/linerate/pktgen"
	lineratev1 "github.com/linerate/linerate/proto/linerate/v1"
	"github.com/linerate/linerate/receiver"
	"github.com/linerate/linerate/topology"
)

// This file maps the proto messages to and from the Go types of pktgen,
// receiver and topology, and nothing else.

func i32s(v []int) []int32 {
	if len(v) == 0 {
		return nil
	}
	out := make([]int32, len(v))
	for i, x := range v {
		out[i] = int32(x)
	}
	return out
}

func ints(v []int32) []int {
	if len(v) == 0 {
		return nil
	}
	out := make([]int, len(v))
	for i, x := range v {
		out[i] = int(x)
	}
	return out
}

func ts(t time.Time) *timestamppb.Timestamp {
	if t.IsZero() {
		return nil
	}
	return timestamppb.New(t)
}

func dur(d time.Duration) *durationpb.Duration {
	if d == 0 {
		return nil
	}
	return durationpb.New(d)
}

// backendFromProto is a SenderConfig's backend: "" is
// pktgen.BackendAuto, as the proto says. The name is the backend choice's
// to refuse (prepare), naming the field and the valid names: an agent
// with a generator of its own sends with that, whatever the name.
func backendFromProto(p *lineratev1.SenderConfig) pktgen.BackendName {
	if b := pktgen.BackendName(p.GetBackend()); b != "" {
		return b
	}
	return pktgen.BackendAuto
}

func addrString(a netip.Addr) string {
	if !a.IsValid() {
		return ""
	}
	return a.String()
}

func macString(m net.HardwareAddr) string {
	if len(m) == 0 {
		return ""
	}
	return m.String()
}

// senderConfigFromProto turns a SenderConfig into a pktgen.Config; errors
// are ErrInvalid and name the field.
func senderConfigFromProto(p *lineratev1.SenderConfig) (pktgen.Config, error) {
	c, err := decodeSenderConfig(p)
	if err != nil {
		return c, fail(ErrInvalid, err)
	}
	return c, nil
}

func decodeSenderConfig(p *lineratev1.SenderConfig) (pktgen.Config, error) {
	var c pktgen.Config
	if p == nil {
		return c, fmt.Errorf("config: missing")
	}
	c.Device = p.Device
	c.CPUs = ints(p.Cpus)
	c.Count = p.Count
	c.Counts = append([]uint64(nil), p.Counts...)
	if len(c.Counts) == 0 {
		c.Counts = nil
	}
	if p.Duration != nil {
		if err := p.Duration.CheckValid(); err != nil {
			return c, fmt.Errorf("config.duration: %w", err)
		}
		c.Duration = p.Duration.AsDuration()
	}
	c.PktSize = int(p.PktSize)
	c.Burst = int(p.Burst)
	c.CloneSkb = int(p.CloneSkb)
	c.RatePPS = p.RatePps
	c.DelayNS = p.DelayNs
	if len(p.RatesPps) > 0 {
		c.Rates = append([]uint64(nil), p.RatesPps...)
	}
	var err error
	for _, f := range []struct {
		name string
		in   string
		out  *netip.Addr
	}{{"dst_min", p.DstMin, &c.DstMin}, {"dst_max", p.DstMax, &c.DstMax}, {"src_min", p.SrcMin, &c.SrcMin}, {"src_max", p.SrcMax, &c.SrcMax}} {
		if f.in == "" {
			continue
		}
		if *f.out, err = netip.ParseAddr(f.in); err != nil {
			return c, fmt.Errorf("config.%s %q: want an IPv4 or IPv6 address: %w", f.name, f.in, err)
		}
	}
	c.SrcPerThread = p.SrcPerThread
	for _, f := range []struct {
		name string
		in   string
		out  *net.HardwareAddr
	}{{"dst_mac", p.DstMac, &c.DstMAC}, {"src_mac", p.SrcMac, &c.SrcMAC}} {
		if f.in == "" {
			continue
		}
		if *f.out, err = net.ParseMAC(f.in); err != nil {
			return c, fmt.Errorf("config.%s %q: want a MAC address such as 02:00:00:00:00:02: %w", f.name, f.in, err)
		}
	}
	c.UDPSrcMin, c.UDPSrcMax = int(p.UdpSrcMin), int(p.UdpSrcMax)
	c.UDPDstMin, c.UDPDstMax = int(p.UdpDstMin), int(p.UdpDstMax)
	if p.VlanId != nil {
		c.HasVLAN, c.VLANID = true, int(*p.VlanId)
	}
	c.VLANPrio = int(p.VlanPrio)
	c.Queues = ints(p.Queues)
	c.Flags = append([]string(nil), p.Flags...)
	if len(c.Flags) == 0 {
		c.Flags = nil
	}
	c.XmitMode = pktgen.XmitMode(p.XmitMode)
	c.AllowFallback = p.AllowFallback
	c.Flows, c.FlowLen = int(p.Flows), int(p.FlowLen)
	if p.QueueMapMin != nil {
		c.HasQueueMap, c.QueueMapMin, c.QueueMapMax = true, int(*p.QueueMapMin), int(p.QueueMapMax)
	}
	if p.NodeAlloc {
		c.HasNode, c.Node = true, pktgen.NodeOfDevice
	}
	c.NeedWakeup = pktgen.NeedWakeup(p.NeedWakeup)
	for _, e := range p.Imix { // the wire's sizes are without FCS
		c.IMIX = append(c.IMIX, pktgen.IMIXEntry{Size: int(e.Size) + pktgen.FCSBytes, Weight: int(e.Weight)})
	}
	for i, d := range p.ThreadDst {
		a, err := netip.ParseAddr(d.Ip)
		if err != nil {
			return c, fmt.Errorf("config.thread_dst[%d].ip %q: want an IPv4 or IPv6 address: %w", i, d.Ip, err)
		}
		mac, err := net.ParseMAC(d.Mac)
		if err != nil {
			return c, fmt.Errorf("config.thread_dst[%d].mac %q: want a MAC address such as 02:00:00:00:00:02: %w", i, d.Mac, err)
		}
		c.ThreadDst = append(c.ThreadDst, pktgen.Dest{Addr: a, MAC: mac})
	}
	return c, nil
}

// senderConfigToProto is the inverse of senderConfigFromProto for the
// fields a SenderConfig carries.
func senderConfigToProto(c *pktgen.Config, backend pktgen.BackendName) *lineratev1.SenderConfig {
	p := &lineratev1.SenderConfig{
		Device: c.Device, Cpus: i32s(c.CPUs), Count: c.Count, Duration: dur(c.Duration),
		PktSize: int32(c.PktSize), Burst: int32(c.Burst), CloneSkb: int32(c.CloneSkb),
		RatePps: c.RatePPS, DelayNs: c.DelayNS,
		DstMin: addrString(c.DstMin), DstMax: addrString(c.DstMax), SrcMin: addrString(c.SrcMin), SrcMax: addrString(c.SrcMax),
		SrcPerThread: c.SrcPerThread, DstMac: macString(c.DstMAC), SrcMac: macString(c.SrcMAC),
		UdpSrcMin: uint32(c.UDPSrcMin), UdpSrcMax: uint32(c.UDPSrcMax), UdpDstMin: uint32(c.UDPDstMin), UdpDstMax: uint32(c.UDPDstMax),
		VlanPrio: uint32(c.VLANPrio), Queues: i32s(c.Queues), XmitMode: string(c.XmitMode), AllowFallback: c.AllowFallback,
		Backend: string(backend), NeedWakeup: string(c.NeedWakeup),
	}
	if len(c.Counts) > 0 {
		p.Counts = append([]uint64(nil), c.Counts...)
	}
	if len(c.Rates) > 0 {
		p.RatesPps = append([]uint64(nil), c.Rates...)
	}
	if len(c.Flags) > 0 {
		p.Flags = append([]string(nil), c.Flags...)
	}
	if c.HasVLAN {
		v := uint32(c.VLANID)
		p.VlanId = &v
	}
	p.Flows, p.FlowLen = int32(c.Flows), int32(c.FlowLen)
	if c.HasQueueMap {
		lo := uint32(c.QueueMapMin)
		p.QueueMapMin, p.QueueMapMax = &lo, uint32(c.QueueMapMax)
	}
	// A node of its own is the device's, as the agent reads it.
	p.NodeAlloc = c.HasNode
	for _, e := range c.IMIX {
		p.Imix = append(p.Imix, &lineratev1.ImixEntry{Size: int32(e.PktSize()), Weight: int32(e.Weight)})
	}
	for _, d := range c.ThreadDst {
		p.ThreadDst = append(p.ThreadDst, &lineratev1.ThreadDest{Ip: addrString(d.Addr), Mac: macString(d.MAC)})
	}
	return p
}

func summaryToProto(s *pktgen.Summary) *lineratev1.SenderSummary {
	if s == nil {
		return nil
	}
	p := &lineratev1.SenderSummary{
		Backend: s.Backend, Device: s.Device, Packets: s.Packets, Errors: s.Errors, Usec: s.USec, Pps: s.PPS,
		L2Bps: s.L2BPS, L1Bps: s.L1BPS, FrameBytes: s.FrameBytes, Warnings: s.Warnings, Interrupted: s.Interrupted,
		Notes: s.Notes,
	}
	for _, t := range s.Threads {
		p.Threads = append(p.Threads, &lineratev1.ThreadSummary{
			Cpu: int32(t.CPU), Entry: t.Entry, Src: t.Src, Packets: t.Packets, Errors: t.Errors, Usec: t.USec, Pps: t.PPS,
			FirstFrameUnixNs: t.FirstFrameNs, PacingWaitUsec: t.PacingWaitUSec,
		})
	}
	return p
}

func reportToProto(r *receiver.Report) *lineratev1.ReceiverReport {
	if r == nil {
		return nil
	}
	p := &lineratev1.ReceiverReport{
		Method: string(r.Method), MethodReason: r.MethodReason, XdpMode: r.XDPMode, Packets: r.Packets, OtherPackets: r.OtherPackets,
		RingDrops: r.RingDrops, OverflowPackets: r.OverflowPackets, Window: r.Window,
		Link: &lineratev1.LinkCounters{
			RxPackets: r.Link.RxPackets, RxDropped: r.Link.RxDropped, RxMissed: r.Link.RxMissed,
			RxFifo: r.Link.RxFifo, XdpPackets: r.Link.XDPPackets, XdpDrops: r.Link.XDPDrops,
		},
	}
	for _, s := range r.Streams {
		p.Streams = append(p.Streams, streamToProto(s))
	}
	return p
}

// streamToProto is one stream's counts on the wire.
func streamToProto(s receiver.StreamReport) *lineratev1.StreamReport {
	ps := &lineratev1.StreamReport{
		Src: addrString(s.Src), Dst: addrString(s.Dst), DstPort: uint32(s.DstPort), Received: s.Received,
		MaxSeq: s.MaxSeq, Duplicates: s.Duplicates, Reordered: s.Reordered, Missing: s.Missing,
		BeyondCapacity: s.BeyondCapacity, Late: s.Late, Unrecorded: s.Unrecorded, MissingRangesFrom: s.MissingRangesFrom,
		FirstArrivalUnixNs: s.FirstArrivalNs, Latency: latencyToProto(s.Latency), Reflected: s.Reflected,
	}
	for _, m := range s.MissingRanges {
		ps.MissingRanges = append(ps.MissingRanges, &lineratev1.SeqRange{From: m[0], To: m[1]})
	}
	for _, q := range s.Queues {
		ps.Queues = append(ps.Queues, &lineratev1.QueuePackets{Queue: q.Queue, Packets: q.Packets})
	}
	return ps
}

// latencyToProto is a stream's delays on the wire: the buckets that are
// not empty (nil: latency off).
func latencyToProto(l *latency.Latency) *lineratev1.Latency {
	if l == nil {
		return nil
	}
	p := &lineratev1.Latency{
		Negative: l.Negative, Absurd: l.Absurd, SumUs: l.SumUs, MinUs: l.MinUs, MaxUs: l.MaxUs,
		Jitter16: l.Jitter16, JitterDiffs: l.JitterN, Clock: string(l.Clock), ClockErrorUs: l.ClockErrorUs,
	}
	for b, c := range l.Counts {
		if c != 0 {
			lo, _ := latency.BucketRange(b)
			p.Buckets = append(p.Buckets, &lineratev1.LatencyBucket{LoUs: lo, Count: c})
		}
	}
	return p
}

func changesToProto(cs []topology.Change) []*lineratev1.IrqChange {
	var out []*lineratev1.IrqChange
	for _, c := range cs {
		out = append(out, &lineratev1.IrqChange{
			Irq: int32(c.IRQ), Name: c.Name, Queue: int32(c.Queue), From: c.From, To: c.To,
			ReadBack: c.ReadBack, Effective: c.Effective, Status: c.Status, Note: c.Note,
		})
	}
	return out
}

func skippedToProto(ss []topology.Skipped) []*lineratev1.SkippedIrq {
	var out []*lineratev1.SkippedIrq
	for _, s := range ss {
		out = append(out, &lineratev1.SkippedIrq{Irq: int32(s.IRQ), Name: s.Name, Reason: s.Reason})
	}
	return out
}

// nicToProto is the inventory half of a Nic from topology's show report
// (nil for an interface without a device: veth).
func nicToProto(iface string, rep *topology.Report) *lineratev1.Nic {
	n := &lineratev1.Nic{Iface: iface, NumaNode: -1}
	if rep == nil {
		return n
	}
	n.Driver, n.Pci, n.NumaNode = rep.Driver, rep.PCI, int32(rep.NUMANode)
	n.LocalCpus = i32s(rep.LocalCPUs.CPUs())
	for _, q := range rep.Queues {
		n.Queues = append(n.Queues, &lineratev1.NicQueue{
			Queue: int32(q.Queue), Irq: int32(q.IRQ), Name: q.Name, Dir: q.Dir, Current: q.Current,
			Effective: q.Effective, Managed: q.Managed,
		})
	}
	n.Skipped = skippedToProto(rep.Skipped)
	n.Warnings = rep.Warnings
	return n
}

// mappingsToProto splits a plan report's queues into the pinned map and
// the managed ones, with the effective affinity read back by Apply.
func mappingsToProto(rep *topology.Report, changes []topology.Change) (pinned, managed []*lineratev1.IrqMapping) {
	eff := map[int]string{}
	for _, c := range changes {
		eff[c.IRQ] = c.Effective
	}
	for _, q := range rep.Queues {
		m := &lineratev1.IrqMapping{Queue: int32(q.Queue), Irq: int32(q.IRQ), Name: q.Name, Dir: q.Dir, Cpu: -1, Effective: eff[q.IRQ]}
		if q.CPU != nil {
			m.Cpu = int32(*q.CPU)
		}
		if q.Managed {
			managed = append(managed, m)
		} else {
			pinned = append(pinned, m)
		}
	}
	return pinned, managed
}

func progressToSample(p pktgen.Progress, frameBytes float64) *lineratev1.SenderSample {
	s := &lineratev1.SenderSample{
		Elapsed: durationpb.New(p.Elapsed), Packets: p.Packets, Errors: p.Errors,
		Bytes: uint64(float64(p.Packets) * frameBytes),
	}
	for _, t := range p.Threads {
		s.Threads = append(s.Threads, &lineratev1.ThreadCounters{Cpu: int32(t.CPU), Packets: t.Packets, Errors: t.Errors})
	}
	return s
}

func snapshotToSample(r receiver.Report) *lineratev1.ReceiverSample {
	s := &lineratev1.ReceiverSample{
		Packets: r.TestPackets(),
		Errors:  r.HostDrops(),
	}
	for _, st := range r.Streams {
		s.Streams = append(s.Streams, &lineratev1.StreamCounters{
			Src: addrString(st.Src), Dst: addrString(st.Dst), DstPort: uint32(st.DstPort), Received: st.Received, MaxSeq: st.MaxSeq,
			Latency: latencyToProto(st.Latency),
		})
	}
	return s
}

func roleToProto(r gossip.Role) lineratev1.Role {
	switch r {
	case gossip.RoleSender:
		return lineratev1.Role_ROLE_SENDER
	case gossip.RoleReceiver:
		return lineratev1.Role_ROLE_RECEIVER
	case gossip.RoleBoth:
		return lineratev1.Role_ROLE_BOTH
	}
	return lineratev1.Role_ROLE_UNSPECIFIED
}

// describedTarget is the receiver name as its own Describe tells it: its
// data addresses and MAC (a sender's destination check takes them from
// here, not from gossip tags).
func describedTarget(name string, d *lineratev1.DescribeResponse) (target, error) {
	switch d.GetRole() {
	case lineratev1.Role_ROLE_RECEIVER, lineratev1.Role_ROLE_BOTH:
	default:
		return target{}, fmt.Errorf("its Describe says role %s: not a receiver", d.GetRole())
	}
	t := target{name: name}
	for _, s := range d.GetNic().GetDataIps() {
		a, err := netip.ParseAddr(s)
		if err != nil {
			return target{}, fmt.Errorf("its Describe's nic.data_ips: %q: not an address", s)
		}
		t.ips = append(t.ips, a.Unmap().WithZone(""))
	}
	if len(t.ips) == 0 {
		return target{}, fmt.Errorf("its Describe names no data address (nic.data_ips)")
	}
	if s := d.GetNic().GetMac(); s != "" {
		mac, err := net.ParseMAC(s)
		if err != nil {
			return target{}, fmt.Errorf("its Describe's nic.mac: %q: not a MAC", s)
		}
		t.mac = mac
	}
	return t, nil
}

// phaseToProto is the proto's name of an agent phase.
func phaseToProto(p phase) lineratev1.Phase {
	switch p {
	case phaseIdle:
		return lineratev1.Phase_PHASE_IDLE
	case phaseConfigured:
		return lineratev1.Phase_PHASE_CONFIGURED
	case phaseScheduled:
		return lineratev1.Phase_PHASE_SCHEDULED
	case phaseRunning:
		return lineratev1.Phase_PHASE_RUNNING
	case phaseDone:
		return lineratev1.Phase_PHASE_DONE
	case phaseFailed:
		return lineratev1.Phase_PHASE_FAILED
	case phaseArmed:
		return lineratev1.Phase_PHASE_ARMED
	}
	return lineratev1.Phase_PHASE_UNSPECIFIED
}

// optDuration is an optional duration of a request (nil when not given);
// an invalid one is an ErrInvalid naming field.
func optDuration(d *durationpb.Duration, field string) (*time.Duration, error) {
	if d == nil {
		return nil, nil
	}
	if err := d.CheckValid(); err != nil {
		return nil, failf(ErrInvalid, "%s: %v", field, err)
	}
	v := d.AsDuration()
	return &v, nil
}

// startAtFromProto is a Start request's instant (now when not given).
func startAtFromProto(t *timestamppb.Timestamp) (time.Time, error) {
	if t == nil {
		return time.Now(), nil
	}
	if err := t.CheckValid(); err != nil {
		return time.Time{}, failf(ErrInvalid, "at: %v", err)
	}
	return t.AsTime(), nil
}

func tuneOptionsFromProto(req *lineratev1.TuneRequest) (tuneOptions, error) {
	o := tuneOptions{threads: int(req.Threads), irqbalance: topology.IRQBalance(req.Irqbalance), exclude: ints(req.ExcludeCpus), fixOnly: req.FixOnly, fixCPUs: ints(req.FixCpus)}
	var err error
	if o.fixes, err = fixClassesFromProto(req.FixClasses); err != nil {
		return o, err
	}
	if o.addrs, err = addrsFromProto(req.Addrs); err != nil {
		return o, err
	}
	if o.fixOnly && len(o.fixes) == 0 {
		return o, failf(ErrInvalid, "fix_only without fix_classes: nothing to do")
	}
	return o, nil
}

// armOptionsFromProto is an Arm request's options. It names no fields
// (receiver.Options.Names): a zero the proto leaves out is the
// receiver's default, as the proto says, where a named field's zero would
// be refused as given.
func armOptionsFromProto(req *lineratev1.ArmRequest) (receiver.Options, error) {
	o := receiver.Options{
		Iface: req.Iface, Method: receiver.Method(req.Method), Pass: req.Pass, Repeats: int(req.Repeats), SeqStride: int(req.SeqStride), Window: req.Window,
		MaxStreams: int(req.MaxStreams), MaxRanges: int(req.MaxRanges), Latency: receiver.LatencyMode(req.Latency),
		NeedWakeup: pktgen.NeedWakeup(req.NeedWakeup), ReflectVLAN: int(req.ReflectVlan),
	}

	for i, p := range req.ReflectPorts {
		if p == 0 || p > 65535 {
			return o, failf(ErrInvalid, "reflect_ports[%d] %d: want a UDP port, 1 to 65535", i, p)
		}
		o.Reflect = append(o.Reflect, uint16(p))
	}
	if len(req.ClockCorrections) > 0 {
		o.ClockCorrections = map[uint16]time.Duration{}
		for i, c := range req.ClockCorrections {
			if c.DstPort == 0 || c.DstPort > 65535 {
				return o, failf(ErrInvalid, "clock_corrections[%d].dst_port %d: want a UDP port, 1 to 65535", i, c.DstPort)
			}
			o.ClockCorrections[uint16(c.DstPort)] = time.Duration(c.AddNs)
		}
	}
	return o, nil
}

func describeToProto(d description) *lineratev1.DescribeResponse {
	nic := nicToProto(d.iface, d.nic.report)
	if len(nic.LocalCpus) == 0 {
		nic.LocalCpus = i32s(d.nic.online) // a virtual device is local to every CPU
	}
	nic.LinkSpeedMbps = d.nic.speed
	if d.nic.err != nil {
		nic.Warnings = append(nic.Warnings, "no NIC topology: "+d.nic.err.Error())
	}
	if d.linkErr != nil {
		nic.Warnings = append(nic.Warnings, d.linkWarning())
	}
	nic.Mac, nic.DataIps, nic.Mtu = macString(d.link.mac), d.link.ips(), int32(d.link.mtu)
	if d.driverOK {
		nic.Firmware = d.driver.Firmware
		if nic.Driver == "" {
			nic.Driver = d.driver.Driver // a virtual device: topology found none
		}
	}
	nic.Model = d.model
	resp := &lineratev1.DescribeResponse{
		HostName: d.host, Kernel: d.kernel, Version: d.version, Role: roleToProto(d.role),
		Nic: nic, Backends: enum.Strings(d.backends), ReceiverMethods: enum.Strings(d.methods), ReceiverMemoryBytes: d.receiverMemory,
		Clock: clockToProto(d.clock), AllowedFixes: enum.Strings(d.allowFixes),
	}
	resp.Checks, resp.Facts = checksToProto(d.checks)
	if d.checksErr != nil {
		resp.ChecksError = d.checksErr.Error()
	}
	if d.leased {
		resp.Lease = leaseToProto(d.lease)
	}
	return resp
}

func tuningToProto(iface string, t *tuning) *lineratev1.TuneResponse {
	if t.fixOnly {
		return &lineratev1.TuneResponse{Iface: iface, Journal: t.journal, NumaNode: int32(t.numa), Fixed: fixedToProto(t.fixed), Warnings: t.warnings}
	}
	pinned, managed := mappingsToProto(t.report, t.changes)
	return &lineratev1.TuneResponse{
		Iface: iface, Journal: t.journal, NumaNode: int32(t.numa), IrqMap: pinned, Managed: managed,
		Skipped: skippedToProto(t.report.Skipped), Changes: changesToProto(t.changes), Warnings: t.warnings,
		Fixed: fixedToProto(t.fixed), Notes: t.report.Notes,
	}
}

// collectToProto is a receiver's report and, on its final collect (irqs
// set), where the queue IRQs fired.
func collectToProto(rep *receiver.Report, irqs *irqCheck) *lineratev1.CollectResponse {
	resp := &lineratev1.CollectResponse{Report: reportToProto(rep), CollectedAt: ts(time.Now())}
	if irqs != nil {
		resp.IrqVerify, resp.IrqVerifyReason = irqVerifyToProto(irqs.result), irqs.reason
	}
	return resp
}

func resultToProto(r *sendResult) *lineratev1.ResultResponse {
	sum := summaryToProto(r.summary)
	if sum != nil && r.txDroppedOK {
		sum.TxDropped = r.txDropped
	}
	resp := &lineratev1.ResultResponse{
		Summary: sum, StartedAt: ts(r.started), StoppedAt: ts(r.stopped),
		IrqVerify: irqVerifyToProto(r.irqs.result), IrqVerifyReason: r.irqs.reason,
		Rtt: rttToProto(r.rtt),
	}
	if r.rtt != nil && r.rtt.err != nil && sum != nil {
		sum.Warnings = append(sum.Warnings, r.rtt.err.Error())
	}
	return resp
}

// watchedToProto is one Watch message: the sample, and the lease as
// Describe shows it when one is held.
func watchedToProto(s sample, h holderInfo, held bool) *lineratev1.WatchResponse {
	resp := sampleToProto(s)
	if held {
		resp.Lease = leaseToProto(h)
	}
	return resp
}

func sampleToProto(s sample) *lineratev1.WatchResponse {
	resp := &lineratev1.WatchResponse{Time: timestamppb.New(s.at)}
	if st := s.sender; st != nil {
		ss := &lineratev1.SenderSample{}
		if st.started {
			ss = progressToSample(st.progress, st.frameBytes)
		}
		ss.Phase = phaseToProto(st.phase)
		if st.err != nil {
			ss.Error = st.err.Error()
		}
		resp.Sender = ss
	}
	if st := s.receiver; st != nil {
		rs := &lineratev1.ReceiverSample{}
		if st.phase == phaseArmed {
			rs = snapshotToSample(st.report)
			rs.Elapsed = durationpb.New(s.at.Sub(st.since))
		}
		rs.Phase = phaseToProto(st.phase)
		resp.Receiver = rs
	}
	return resp
}
