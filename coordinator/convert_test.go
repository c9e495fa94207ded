package coordinator

import (
	"fmt"
	"net/netip"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/linerate/linerate/latency"
	"github.com/linerate/linerate/pktgen"
	lineratev1 "github.com/linerate/linerate/proto/linerate/v1"
	"google.golang.org/protobuf/reflect/protoreflect"
)

func TestDescribeThenTune(t *testing.T) {
	h := &Host{Name: "r1"}
	f := describeInto(h, &lineratev1.DescribeResponse{Kernel: "6.1", Nic: &lineratev1.Nic{
		Iface: "eth1", Driver: "i40e", NumaNode: 1, LinkSpeedMbps: 10000, Firmware: "9.2", Model: "8086:1572", Pci: "0000:3b:00.0",
		Mac: "02:00:00:00:01:01", DataIps: []string{"fe80::1", "not an address", "198.18.0.101"}, LocalCpus: []int32{1, 3},
		Queues:  []*lineratev1.NicQueue{{Queue: 0, Irq: 0}, {Queue: 1, Irq: 88}},
		Skipped: []*lineratev1.SkippedIrq{{Irq: 90, Name: "i40e-misc", Reason: "not a queue"}},
	}})
	if h.Kernel != "6.1" || h.Iface != "eth1" || h.Driver != "i40e" || h.NUMANode != 1 || h.LinkSpeedMbps != 10000 ||
		h.Firmware != "9.2" || h.Model != "8086:1572" || h.PCI != "0000:3b:00.0" || len(h.SkippedIRQs) != 1 || h.SkippedIRQs[0].IRQ != 90 {
		t.Errorf("host after Describe: %+v", h)
	}
	if !f.present || f.mac != "02:00:00:00:01:01" || len(f.dataIPs) != 2 || !slices.Equal(f.localCPUs, []int{1, 3}) || !f.queueIRQs {
		t.Errorf("nic facts: %+v", f)
	}
	if a := dataAddr(f.dataIPs, false); a != netip.MustParseAddr("198.18.0.101") {
		t.Errorf("data address %s, want the IPv4 one", a)
	}
	if a := dataAddr([]netip.Addr{netip.MustParseAddr("2001:db8::1")}, false); a.String() != "2001:db8::1" {
		t.Errorf("IPv6 only: data address %s", a)
	}
	tunedInto(h, &lineratev1.TuneResponse{NumaNode: 0, IrqMap: []*lineratev1.IrqMapping{{Queue: 1, Irq: 88, Cpu: 3, Name: "i40e-eth1-TxRx-1", Dir: "txrx"}},
		Managed: []*lineratev1.IrqMapping{{Queue: 2, Irq: 89, Cpu: 5}}, Warnings: []string{"irqbalance"}})
	if h.NUMANode != 0 || len(h.IRQMap) != 1 || h.IRQMap[0] != (IRQPin{Queue: 1, IRQ: 88, CPU: 3, Name: "i40e-eth1-TxRx-1", Dir: "txrx"}) ||
		len(h.ManagedIRQs) != 1 || h.SkippedIRQs != nil || !slices.Equal(h.Warnings, []string{"irqbalance"}) || h.Notes != nil {
		t.Errorf("host after Tune: %+v", h)
	}
	// The plan's notes (queues wrapped onto fewer CPUs) are the host's
	// notes, as its agent said them, never warnings.
	note := "4 queues of data0 on 2 CPUs (cpu2: q0 q2, cpu3: q1 q3): more queues than usable local CPUs, so they wrap round-robin, several per CPU"
	w := &Host{Name: "s1", Iface: "data0"}
	tunedInto(w, &lineratev1.TuneResponse{IrqMap: []*lineratev1.IrqMapping{{Queue: 0, Irq: 28, Cpu: 2}}, Notes: []string{note}})
	if !slices.Equal(w.Notes, []string{note}) || len(w.Warnings) != 0 {
		t.Errorf("notes %q, warnings %q: want the agent's note %q and no warning", w.Notes, w.Warnings, note)
	}
	if f := describeInto(&Host{}, &lineratev1.DescribeResponse{}); f.present {
		t.Errorf("no NIC described: %+v", f)
	}
}

func TestReports(t *testing.T) {
	s := senderReportOf(&lineratev1.SenderSummary{Packets: 10, Errors: 1, TxDropped: 2, Pps: 5, Usec: 2_000_000, Backend: "kernel",
		Threads: []*lineratev1.ThreadSummary{{Src: "198.18.0.1", Packets: 10, Errors: 1, Pps: 5}}})
	if s.Seconds() != 2 || s.TxDropped != 2 || s.Packets != 10 || s.Backend != "kernel" || len(s.Threads) != 1 ||
		!reflect.DeepEqual(s.Threads[0], pktgen.ThreadSummary{Src: "198.18.0.1", Packets: 10, Errors: 1, PPS: 5}) {
		t.Errorf("sender report %+v", s)
	}
	r, err := receiverReportOf(&lineratev1.ReceiverReport{Method: "xdp", Packets: 12, OtherPackets: 2, RingDrops: 1,
		Link:    &lineratev1.LinkCounters{RxDropped: 2, RxMissed: 3, RxFifo: 4},
		Streams: []*lineratev1.StreamReport{{Src: "198.18.0.1", Dst: "2001:db8::2", DstPort: 10000, Received: 10, MaxSeq: 11, Missing: 1, MissingRanges: []*lineratev1.SeqRange{{From: 4, To: 4}}}}})
	if err != nil {
		t.Fatal(err)
	}
	if r.HostDrops() != 10 || r.Packets != 12 || r.OtherPackets != 2 || len(r.Streams) != 1 || r.Streams[0].Src != netip.MustParseAddr("198.18.0.1") ||
		r.Streams[0].Dst != netip.MustParseAddr("2001:db8::2") || r.Streams[0].DstPort != 10000 || !slices.Equal(r.Streams[0].MissingRanges, [][2]uint64{{4, 4}}) {
		t.Errorf("receiver report %+v", r)
	}
	if r, err := receiverReportOf(&lineratev1.ReceiverReport{Streams: []*lineratev1.StreamReport{{DstPort: 9}}}); err != nil || r.Streams[0].Src.IsValid() {
		t.Errorf("a stream without addresses: %+v, %v; want the zero Addr", r, err)
	}
	for _, bad := range []*lineratev1.StreamReport{{Src: "a", Dst: "198.18.0.2"}, {Src: "198.18.0.1", Dst: "b"}} {
		if _, err := receiverReportOf(&lineratev1.ReceiverReport{Streams: []*lineratev1.StreamReport{bad}}); err == nil || !strings.Contains(err.Error(), "streams[0]") {
			t.Errorf("stream %v: %v, want an error naming it", bad, err)
		}
	}
	if senderReportOf(nil) != nil {
		t.Error("no summary: not nil")
	}
	if r, err := receiverReportOf(nil); r != nil || err != nil {
		t.Errorf("no report: %+v, %v; want nil", r, err)
	}
}

// Every field of the agents' reports reaches the data plane's types: a
// message with every field set decodes to a value with every field set,
// but for what the wire does not carry. A field added to both and not to
// the decoder fails here.
func TestReportsDecodeEveryField(t *testing.T) {
	n := 0
	var sum lineratev1.SenderSummary
	fillMessage(sum.ProtoReflect(), &n)
	notCarried := []string{".Summary.Threads[0].Queue"} // the TX queue stays on the sender
	if got := unset(reflect.ValueOf(*senderReportOf(&sum)), ""); !slices.Equal(got, notCarried) {
		t.Errorf("sender report: unset after decoding %v, want only %v", got, notCarried)
	}
	var rep lineratev1.ReceiverReport
	fillMessage(rep.ProtoReflect(), &n)
	r, err := receiverReportOf(&rep)
	if err != nil {
		t.Fatal(err)
	}
	// The stamp correction is the coordinator's, from the sender's
	// pacing wait (stamp.go); a receiver never knows it.
	notCarried = []string{".Streams[0].Latency.StampCorrectionUs"}
	if got := unset(reflect.ValueOf(*r), ""); !slices.Equal(got, notCarried) {
		t.Errorf("receiver report: unset after decoding %v, want only %v", got, notCarried)
	}
}

// fillMessage sets every field of m, each list to one element and every
// nested message filled in turn, each to a value of its own (*n counts
// them). Strings are addresses, which any string of a report may be, but
// a clock (one of latency.Clocks); a bucket's lowest delay is one below
// 64 µs, where every value starts a bucket.
func fillMessage(m protoreflect.Message, n *int) {
	fields := m.Descriptor().Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		switch {
		case fd.IsMap():
			panic("fillMessage: maps are not filled: " + fd.FullName())
		case fd.IsList() && fd.Message() != nil:
			l := m.Mutable(fd).List()
			e := l.NewElement()
			fillMessage(e.Message(), n)
			l.Append(e)
		case fd.IsList():
			m.Mutable(fd).List().Append(scalarOf(fd, n))
		case fd.Message() != nil:
			fillMessage(m.Mutable(fd).Message(), n)
		case fd.Name() == "clock":
			m.Set(fd, protoreflect.ValueOfString(string(latency.Estimated)))
		case fd.Name() == "lo_us":
			m.Set(fd, protoreflect.ValueOfUint64(uint64(*n%64)))
		default:
			m.Set(fd, scalarOf(fd, n))
		}
	}
}

// scalarOf is the next value for a scalar field of kind fd.Kind().
func scalarOf(fd protoreflect.FieldDescriptor, n *int) protoreflect.Value {
	*n++
	switch fd.Kind() {
	case protoreflect.StringKind:
		return protoreflect.ValueOfString(fmt.Sprintf("198.18.%d.%d", *n/256, *n%256))
	case protoreflect.BoolKind:
		return protoreflect.ValueOfBool(true)
	case protoreflect.Int32Kind:
		return protoreflect.ValueOfInt32(int32(*n))
	case protoreflect.Int64Kind:
		return protoreflect.ValueOfInt64(int64(*n))
	case protoreflect.Uint32Kind:
		return protoreflect.ValueOfUint32(uint32(*n))
	case protoreflect.Uint64Kind:
		return protoreflect.ValueOfUint64(uint64(*n))
	case protoreflect.DoubleKind:
		return protoreflect.ValueOfFloat64(float64(*n) + 0.5)
	}
	panic(fmt.Sprintf("scalarOf: %s: kind %s", fd.FullName(), fd.Kind()))
}

// unset lists the fields of v, nested ones and list elements included,
// that hold their zero value (a list: none), each by its path from path.
func unset(v reflect.Value, path string) []string {
	switch v.Kind() {
	case reflect.Struct:
		if a, ok := v.Interface().(netip.Addr); ok {
			return unsetIf(!a.IsValid(), path)
		}
		var out []string
		for i := range v.NumField() {
			if f := v.Type().Field(i); f.IsExported() {
				out = append(out, unset(v.Field(i), path+"."+f.Name)...)
			}
		}
		return out
	case reflect.Array:
		// a fixed array (a histogram's buckets) is set when any element is
		return unsetIf(v.IsZero(), path)
	case reflect.Slice:
		if v.Len() == 0 {
			return []string{path}
		}
		var out []string
		for i := range v.Len() {
			out = append(out, unset(v.Index(i), fmt.Sprintf("%s[%d]", path, i))...)
		}
		return out
	case reflect.Pointer:
		if v.IsNil() {
			return []string{path}
		}
		return unset(v.Elem(), path)
	}
	return unsetIf(v.IsZero(), path)
}

func unsetIf(zero bool, path string) []string {
	if zero {
		return []string{path}
	}
	return nil
}

func TestSenderConfig(t *testing.T) {
	p := sendPlan{
		threads: planThreads([]int{0, 1}, 1, []pktgen.Slot{{CPU: 2, Queue: 0}, {CPU: 4, Queue: 1}}, 100, 1, 1000),
		frame:   60, imix: pktgen.IMIX{{Size: 64, Weight: 7}, {Size: 1518, Weight: 1}}, duration: time.Second, port: 10001, backend: "kernel",
		dst:    endpoint{ip: netip.MustParseAddr("198.18.0.101"), mac: "02:00:00:00:01:01"},
		perDst: []endpoint{{netip.MustParseAddr("198.18.0.101"), "m1"}, {netip.MustParseAddr("198.18.0.102"), "m2"}},
	}
	c := senderConfig(p)
	if c.PktSize != 0 || len(c.Imix) != 2 || c.Imix[1].Size != 1514 || !slices.Equal(c.Cpus, []int32{2, 4}) || !slices.Equal(c.Queues, []int32{0, 1}) ||
		!slices.Equal(c.Counts, []uint64{100, 100}) || !slices.Equal(c.RatesPps, []uint64{1000, 1000}) || c.RatePps != 0 || c.Duration.AsDuration() != time.Second || c.DstMin != "198.18.0.101" ||
		c.UdpDstMin != 10001 || c.UdpDstMax != 10001 || !c.SrcPerThread || len(c.ThreadDst) != 2 || c.ThreadDst[1].Mac != "m2" {
		t.Errorf("sender config %v", c)
	}
	p.imix, p.duration, p.perDst = nil, 0, nil
	if c := senderConfig(p); c.PktSize != 60 || c.Duration != nil || c.ThreadDst != nil {
		t.Errorf("one size, a count, one flow: %v", c)
	}
	if c.XmitMode != "" {
		t.Errorf("xmit mode %q without one in the plan, want the default (empty)", c.XmitMode)
	}
	p.xmit = pktgen.XmitQueue
	if c := senderConfig(p); c.XmitMode != "queue_xmit" {
		t.Errorf("xmit mode %q, want the plan's queue_xmit", c.XmitMode)
	}
}

// A stream's delays decode bucket by bucket; a bucket that is not one
// of the layout's, or a clock that is not one of latency.Clocks, is
// refused by name.
func TestLatencyFromProto(t *testing.T) {
	l, err := latencyFromProto(&lineratev1.Latency{Buckets: []*lineratev1.LatencyBucket{{LoUs: 5, Count: 2}, {LoUs: 1024, Count: 3}}, MinUs: 5, MaxUs: 1050, Clock: "same-host"})
	if err != nil || l.Samples() != 5 || l.Counts[latency.Bucket(1024)] != 3 || l.Clock != latency.SameHost {
		t.Errorf("latency %+v, %v", l, err)
	}
	for bad, says := range map[*lineratev1.Latency]string{
		{Clock: "gps"}: `clock "gps"`,
		{Clock: "same-host", Buckets: []*lineratev1.LatencyBucket{{LoUs: 1025, Count: 1}}}:    "bucket at 1025 µs: not a bucket's lowest value (the bucket holding it starts at 1024 µs)",
		{Clock: "same-host", Buckets: []*lineratev1.LatencyBucket{{LoUs: 1 << 24, Count: 1}}}: "past the histogram's top",
	} {
		if _, err := latencyFromProto(bad); err == nil || !strings.Contains(err.Error(), says) {
			t.Errorf("%v: %v, want it to say %q", bad, err, says)
		}
	}
	if l, err := latencyFromProto(nil); l != nil || err != nil {
		t.Errorf("no latency: %+v, %v", l, err)
	}
}
