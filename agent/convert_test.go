package agent

import (
	"fmt"
	"net"
	"net/netip"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/linerate/linerate/pktgen"
	lineratev1 "github.com/linerate/linerate/proto/linerate/v1"
	"github.com/linerate/linerate/receiver"
	"github.com/linerate/linerate/topology"
)

// wire sends m through protojson and back, as a coordinator would read it.
func wire[T proto.Message](t *testing.T, m T, fresh T) T {
	t.Helper()
	b, err := protojson.MarshalOptions{UseProtoNames: true}.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if err := protojson.Unmarshal(b, fresh); err != nil {
		t.Fatal(err)
	}
	return fresh
}

func TestSenderConfigRoundTrip(t *testing.T) {
	mac := func(s string) net.HardwareAddr { m, _ := net.ParseMAC(s); return m }
	in := pktgen.Config{
		Device: "eth0", CPUs: []int{2, 3}, Counts: []uint64{5, 4}, Duration: 3 * time.Second, PktSize: 60, Burst: 1, CloneSkb: 0,
		DelayNS: 1000, DstMin: netip.MustParseAddr("198.18.0.2"), DstMax: netip.MustParseAddr("198.18.0.9"),
		SrcMin: netip.MustParseAddr("198.18.0.11"), SrcPerThread: true, DstMAC: mac("02:00:00:00:00:02"), SrcMAC: mac("02:00:00:00:00:01"),
		UDPSrcMin: 1000, UDPSrcMax: 1006, UDPDstMin: 9, UDPDstMax: 9, HasVLAN: true, VLANID: 0, VLANPrio: 3,
		Queues: []int{0, 1}, Flags: []string{"UDPCSUM", "!NO_TIMESTAMP"}, XmitMode: pktgen.XmitQueue, AllowFallback: true,
		IMIX:      pktgen.IMIX{{Size: 64, Weight: 7}, {Size: 570, Weight: 4}},
		ThreadDst: []pktgen.Dest{{Addr: netip.MustParseAddr("198.18.0.101"), MAC: mac("02:00:00:00:01:01")}},
	}
	p := wire(t, senderConfigToProto(&in, "afpacket"), &lineratev1.SenderConfig{})
	if p.Backend != "afpacket" || p.GetVlanId() != 0 || p.VlanId == nil {
		t.Errorf("proto: %v", p)
	}
	out, err := senderConfigFromProto(p)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(in, out, cmp.Comparer(func(a, b netip.Addr) bool { return a == b })); diff != "" {
		t.Errorf("round trip (-in +out):\n%s", diff)
	}
	in.DelayNS, in.Rates = 0, []uint64{4, 3} // a flow's 7 pps split over its threads
	if out, err := senderConfigFromProto(wire(t, senderConfigToProto(&in, ""), &lineratev1.SenderConfig{})); err != nil || !slices.Equal(out.Rates, in.Rates) {
		t.Errorf("per-thread rates: %v after the round trip (%v), want %v", out.Rates, err, in.Rates)
	}
	for _, bad := range []*lineratev1.SenderConfig{{DstMin: "x"}, {DstMac: "zz"}, nil,
		{ThreadDst: []*lineratev1.ThreadDest{{Ip: "x", Mac: "02:00:00:00:00:01"}}}, {ThreadDst: []*lineratev1.ThreadDest{{Ip: "198.18.0.1", Mac: "z"}}}} {
		if _, err := senderConfigFromProto(bad); err == nil {
			t.Errorf("%v: accepted", bad)
		}
	}
}

func TestSummaryToProto(t *testing.T) {
	in := &pktgen.Summary{
		Backend: "kernel", Device: "eth0", Packets: 2000, Errors: 1, USec: 1500, PPS: 1.3e6, L2BPS: 6.4e8, L1BPS: 8.7e8, FrameBytes: 60,
		Threads:  []pktgen.ThreadSummary{{CPU: 1, Entry: "eth0@1", Src: "198.18.0.11", Packets: 2000, Errors: 1, USec: 1500, PPS: 1.3e6, FirstFrameNs: 1764650000123456789}},
		Warnings: []string{"w"}, Interrupted: true,
	}
	want := &lineratev1.SenderSummary{
		Backend: "kernel", Device: "eth0", Packets: 2000, Errors: 1, Usec: 1500, Pps: 1.3e6, L2Bps: 6.4e8, L1Bps: 8.7e8, FrameBytes: 60,
		Threads:  []*lineratev1.ThreadSummary{{Cpu: 1, Entry: "eth0@1", Src: "198.18.0.11", Packets: 2000, Errors: 1, Usec: 1500, Pps: 1.3e6, FirstFrameUnixNs: 1764650000123456789}},
		Warnings: []string{"w"}, Interrupted: true,
	}
	if diff := cmp.Diff(want, wire(t, summaryToProto(in), &lineratev1.SenderSummary{}), protocmp.Transform()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestReportToProto(t *testing.T) {
	in := &receiver.Report{
		Method: "xdp", MethodReason: "native", XDPMode: "native", Packets: 12, OtherPackets: 2, RingDrops: 1, OverflowPackets: 3, Window: 1 << 16,
		Link: receiver.LinkCounters{RxPackets: 1, RxDropped: 2, RxMissed: 3, RxFifo: 4, XDPPackets: 5, XDPDrops: 6},
		Streams: []receiver.StreamReport{{
			Src: netip.MustParseAddr("198.18.0.11"), Dst: netip.MustParseAddr("2001:db8::2"), DstPort: 9, Received: 7,
			Duplicates: 1, Reordered: 2, Missing: 3, MissingRanges: [][2]uint64{{2, 3}, {1<<32 + 5, 1<<32 + 5}}, BeyondCapacity: 1,
			Late: 4, Unrecorded: 5, MissingRangesFrom: 2, MaxSeq: 1<<32 + 9, FirstArrivalNs: 1764650000123999999,
			Queues: []receiver.QueuePackets{{Queue: 0, Packets: 3}, {Queue: 2, Packets: 4}},
		}},
	}
	want := &lineratev1.ReceiverReport{
		Method: "xdp", MethodReason: "native", XdpMode: "native", Packets: 12, OtherPackets: 2, RingDrops: 1, OverflowPackets: 3, Window: 1 << 16,
		Link: &lineratev1.LinkCounters{RxPackets: 1, RxDropped: 2, RxMissed: 3, RxFifo: 4, XdpPackets: 5, XdpDrops: 6},
		Streams: []*lineratev1.StreamReport{{
			Src: "198.18.0.11", Dst: "2001:db8::2", DstPort: 9, Received: 7,
			Duplicates: 1, Reordered: 2, Missing: 3, MissingRanges: []*lineratev1.SeqRange{{From: 2, To: 3}, {From: 1<<32 + 5, To: 1<<32 + 5}}, BeyondCapacity: 1,
			Late: 4, Unrecorded: 5, MissingRangesFrom: 2, MaxSeq: 1<<32 + 9, FirstArrivalUnixNs: 1764650000123999999,
			Queues: []*lineratev1.QueuePackets{{Queue: 0, Packets: 3}, {Queue: 2, Packets: 4}},
		}},
	}
	if diff := cmp.Diff(want, wire(t, reportToProto(in), &lineratev1.ReceiverReport{}), protocmp.Transform()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// Every field of the data plane's reports reaches the wire: a value with
// every field set encodes to a message with every field set, but for
// what the agent adds beside it or the wire does not carry. A field added
// to both and not to the encoder fails here.
func TestReportsEncodeEveryField(t *testing.T) {
	n := 0
	var sum pktgen.Summary
	setAll(reflect.ValueOf(&sum).Elem(), &n)
	// tx_dropped is the host's, which resultToProto adds.
	notSet := []string{".tx_dropped"}
	if got := unsetFields(summaryToProto(&sum).ProtoReflect(), ""); !slices.Equal(got, notSet) {
		t.Errorf("sender summary: unset after encoding %v, want only %v", got, notSet)
	}
	var rep receiver.Report
	setAll(reflect.ValueOf(&rep).Elem(), &n)
	// Every histogram bucket is set, and the first starts at 0 µs: its
	// lowest value is the proto's zero.
	notSet = []string{".streams[0].latency.buckets[0].lo_us"}
	if got := unsetFields(reportToProto(&rep).ProtoReflect(), ""); !slices.Equal(got, notSet) {
		t.Errorf("receiver report: unset after encoding %v, want only %v", got, notSet)
	}
}

// setAll sets every exported field of v, each list to one element and
// every nested struct in turn, each to a value of its own (*n counts
// them); addresses are addresses.
func setAll(v reflect.Value, n *int) {
	*n++
	switch v.Kind() {
	case reflect.Struct:
		if _, ok := v.Interface().(netip.Addr); ok {
			v.Set(reflect.ValueOf(netip.AddrFrom4([4]byte{198, 18, byte(*n / 256), byte(*n % 256)})))
			return
		}
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				setAll(v.Field(i), n)
			}
		}
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		setAll(v.Index(0), n)
	case reflect.Array:
		for i := range v.Len() {
			setAll(v.Index(i), n)
		}
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		setAll(v.Elem(), n)
	case reflect.String:
		v.SetString(fmt.Sprint(*n))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int32, reflect.Int64:
		v.SetInt(int64(*n))
	case reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(*n))
	case reflect.Float64:
		v.SetFloat(float64(*n) + 0.5)
	default:
		panic("setAll: kind " + v.Kind().String())
	}
}

// unsetFields lists the fields of m, nested messages and list elements
// included, that are not set (proto3: zero; a list: empty), each by its
// path from path.
func unsetFields(m protoreflect.Message, path string) []string {
	var out []string
	fields := m.Descriptor().Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		p := path + "." + string(fd.Name())
		switch {
		case !m.Has(fd):
			out = append(out, p)
		case fd.IsList() && fd.Message() != nil:
			for j, l := 0, m.Get(fd).List(); j < l.Len(); j++ {
				out = append(out, unsetFields(l.Get(j).Message(), fmt.Sprintf("%s[%d]", p, j))...)
			}
		case fd.Message() != nil && !fd.IsMap():
			out = append(out, unsetFields(m.Get(fd).Message(), p)...)
		}
	}
	return out
}

func TestChangesRoundTrip(t *testing.T) {
	in := []topology.Change{{IRQ: 41, Name: "eth0-TxRx-0", Queue: 0, From: "0-7", To: "0", ReadBack: "0", Effective: "0", Status: "applied", Note: "n"}}
	p := &lineratev1.RestoreResponse{Changes: changesToProto(in)}
	out := changesFromProto(wire(t, p, &lineratev1.RestoreResponse{}).Changes)
	if diff := cmp.Diff(in, out); diff != "" {
		t.Errorf("round trip (-in +out):\n%s", diff)
	}
}

// A SenderConfig's backend: empty is auto, as the proto says; any other
// name is itself, for the backend choice to take or refuse (prepare).
func TestBackendFromProto(t *testing.T) {
	if b := backendFromProto(&lineratev1.SenderConfig{}); b != pktgen.BackendAuto {
		t.Errorf("empty: %q, want auto", b)
	}
	for _, name := range append(slices.Clone(pktgen.BackendNames), "warp") {
		if b := backendFromProto(&lineratev1.SenderConfig{Backend: string(name)}); b != name {
			t.Errorf("%s: %q", name, b)
		}
	}
}
