package coordinator

import (
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/linerate/linerate/pktgen"
	recv "github.com/linerate/linerate/receiver"
)

// ip is an address of a test.
func ip(s string) netip.Addr { return netip.MustParseAddr(s) }

// Two senders into one receiver: s1's two threads and s2's one share a
// source address, the port tells the flows apart; the receiver's host
// drops are shared out over its flows in order, once.
func TestReconcileRunFanIn(t *testing.T) {
	in := runCounts{
		Pairs:      []Pair{{Sender: "s1", Receiver: "r1"}, {Sender: "s2", Receiver: "r1"}},
		FrameBytes: 60,
		Senders: map[string]senderEnd{
			"s1": {Port: 10000, LinkSpeedMbps: 10000, Report: &senderReport{Summary: pktgen.Summary{PPS: 2000, USec: 1e6, Threads: []pktgen.ThreadSummary{
				{Src: "198.18.0.1", Packets: 1000}, {Src: "198.18.0.2", Packets: 1000, Errors: 2}}}}},
			"s2": {Port: 10001, LinkSpeedMbps: 1000, Report: &senderReport{TxDropped: 3, Summary: pktgen.Summary{PPS: 500, USec: 2e6, Threads: []pktgen.ThreadSummary{
				{Src: "198.18.0.2", Packets: 500}}}}},
		},
		Receivers: map[string]receiverEnd{
			"r1": {Dst: ip("198.18.0.101"), LinkSpeedMbps: 10000, Report: &recv.Report{RingDrops: 25, Streams: []recv.StreamReport{
				{Src: ip("198.18.0.1"), Dst: ip("198.18.0.101"), DstPort: 10000, Received: 990, MaxSeq: 999, Missing: 10, MissingRanges: [][2]uint64{{5, 14}}},
				{Src: ip("198.18.0.2"), Dst: ip("198.18.0.101"), DstPort: 10000, Received: 990},
				{Src: ip("198.18.0.2"), Dst: ip("198.18.0.101"), DstPort: 10001, Received: 490},
			}}},
		},
	}
	flows, warnings := reconcileRun(in)
	if len(flows) != 2 || len(warnings) != 0 {
		t.Fatalf("%d flows, warnings %q", len(flows), warnings)
	}
	f1, f2 := flows[0], flows[1]
	if f1.Sent != 2000 || f1.Received != 1980 || f1.Lost != 20 || f1.Streams != 2 || f1.Refused != 2 || f1.DurationSec != 1 || f1.AchievedPPS != 2000 {
		t.Errorf("flow s1→r1: %+v", f1)
	}
	if f2.Sent != 500 || f2.Received != 490 || f2.Lost != 10 || f2.DurationSec != 2 || f2.AchievedPPS != 500 {
		t.Errorf("flow s2→r1: %+v", f2)
	}
	if f1.LostReceiverHost != 20 || f2.LostSenderHost != 3 || f2.LostReceiverHost != 5 || f2.LostNetwork != 2 {
		t.Errorf("attribution: s1 %d@rx, s2 %d@tx %d@rx %d@net", f1.LostReceiverHost, f2.LostSenderHost, f2.LostReceiverHost, f2.LostNetwork)
	}
	// The slower link of the two ends is the line: s2's 1 Gb/s.
	if want := 100 * f2.L1BPS / 1e9; f2.LineRatePct != want {
		t.Errorf("s2's line rate %% = %v, want %v (of its 1G link)", f2.LineRatePct, want)
	}
	s := f1.StreamDetail[0]
	if s.Src != ip("198.18.0.1") || s.Dst != ip("198.18.0.101") || s.DstPort != 10000 || s.Sent != 1000 || s.Lost != 10 ||
		s.MaxSeq != 999 || s.Missing != 10 || !slices.Equal(s.MissingRanges, [][2]uint64{{5, 14}}) {
		t.Errorf("stream detail of s1's thread 0: %+v", s)
	}
}

// A frame the kernel refused and the backend sent again is in the
// sending device's tx_dropped too (a veth peer's full backlog): it is no
// loss, so it does not stand for one. s1's device dropped 5 frames, all 5
// refused and resent; its flow's 3 lost are the network's.
func TestReconcileRunRefusedNotSenderLoss(t *testing.T) {
	in := runCounts{
		Pairs: []Pair{{Sender: "s1", Receiver: "r1"}},
		Senders: map[string]senderEnd{"s1": {Port: 10000, Report: &senderReport{TxDropped: 7, Summary: pktgen.Summary{PPS: 1000, USec: 1e6, Errors: 5, Threads: []pktgen.ThreadSummary{
			{Src: "198.18.0.1", Packets: 500, Errors: 3}, {Src: "198.18.0.2", Packets: 500, Errors: 2}}}}}},
		Receivers: map[string]receiverEnd{"r1": {Dst: ip("198.18.0.101"), Report: &recv.Report{Streams: []recv.StreamReport{
			{Src: ip("198.18.0.1"), Dst: ip("198.18.0.101"), DstPort: 10000, Received: 497},
			{Src: ip("198.18.0.2"), Dst: ip("198.18.0.101"), DstPort: 10000, Received: 497},
		}}}},
	}
	flows, _ := reconcileRun(in)
	if len(flows) != 1 {
		t.Fatalf("%d flows", len(flows))
	}
	// tx_dropped 7 less 5 refused: 2 frames the device dropped for good.
	if f := flows[0]; f.Lost != 6 || f.Refused != 5 || f.LostSenderHost != 2 || f.LostNetwork != 4 {
		t.Errorf("lost %d (sender host %d, network %d), refused %d: want 6 (2, 4), 5", f.Lost, f.LostSenderHost, f.LostNetwork, f.Refused)
	}
}

// A sender of several flows: each thread belongs to the flow FlowOf
// names, and each flow's achieved rate is its own threads'.
func TestReconcileRunMesh(t *testing.T) {
	in := runCounts{
		Pairs: []Pair{{Sender: "s1", Receiver: "r1"}, {Sender: "s1", Receiver: "r2"}},
		Senders: map[string]senderEnd{"s1": {Port: 10000, FlowOf: []int{0, 1}, Report: &senderReport{Summary: pktgen.Summary{PPS: 999, USec: 1e6, Threads: []pktgen.ThreadSummary{
			{Src: "198.18.0.1", Packets: 300, PPS: 300}, {Src: "198.18.0.1", Packets: 200, PPS: 200}}}}}},
		Receivers: map[string]receiverEnd{
			"r1": {Dst: ip("198.18.0.101"), Report: &recv.Report{Streams: []recv.StreamReport{{Src: ip("198.18.0.1"), Dst: ip("198.18.0.101"), DstPort: 10000, Received: 300}}}},
			"r2": {Dst: ip("198.18.0.102"), Report: &recv.Report{Streams: []recv.StreamReport{{Src: ip("198.18.0.1"), Dst: ip("198.18.0.102"), DstPort: 10000, Received: 193}}}},
		},
	}
	flows, warnings := reconcileRun(in)
	if len(flows) != 2 || len(warnings) != 0 {
		t.Fatalf("%d flows, warnings %q", len(flows), warnings)
	}
	if f := flows[0]; f.Sent != 300 || f.Lost != 0 || f.AchievedPPS != 300 || f.Streams != 1 {
		t.Errorf("flow s1→r1: %+v", f)
	}
	if f := flows[1]; f.Sent != 200 || f.Lost != 7 || f.AchievedPPS != 200 || f.StreamDetail[0].Dst != ip("198.18.0.102") {
		t.Errorf("flow s1→r2: %+v", f)
	}
}

// A flow without both reports has no result; a stream nobody sent is
// reported, not counted.
func TestReconcileRunWarnings(t *testing.T) {
	in := runCounts{
		Pairs: []Pair{{Sender: "s1", Receiver: "r1"}, {Sender: "s2", Receiver: "r1"}},
		Senders: map[string]senderEnd{
			"s1": {Port: 10000, Report: &senderReport{Summary: pktgen.Summary{USec: 1e6, Threads: []pktgen.ThreadSummary{{Src: "198.18.0.1", Packets: 100}}}}},
			"s2": {Port: 10001},
		},
		Receivers: map[string]receiverEnd{"r1": {Dst: ip("198.18.0.101"), Report: &recv.Report{Streams: []recv.StreamReport{
			{Src: ip("198.18.0.1"), Dst: ip("198.18.0.101"), DstPort: 10000, Received: 100},
			{Src: ip("198.18.0.9"), Dst: ip("198.18.0.101"), DstPort: 10000, Received: 42},
		}}}},
	}
	flows, warnings := reconcileRun(in)
	if len(flows) != 1 || flows[0].Sent != 100 || flows[0].Received != 100 || flows[0].Lost != 0 {
		t.Fatalf("flows %+v", flows)
	}
	got := strings.Join(warnings, "\n")
	for _, want := range []string{"42 packets of an unknown stream from 198.18.0.9 to port 10000", "flow s2 → r1: no result (sender summary false, receiver report true)"} {
		if !strings.Contains(got, want) {
			t.Errorf("warnings %q do not say %q", got, want)
		}
	}
}

// A flow's achieved rate is its threads' own rates summed (each over its
// own time sending), not its packets over the span from the first
// thread's start to the last one's stop: kernel pktgen's threads start
// up to one of their polls apart.
func TestReconcileAchievedFromThreads(t *testing.T) {
	in := runCounts{
		Pairs:      []Pair{{Sender: "s1", Receiver: "r1"}},
		FrameBytes: 60, OfferedPPS: 10000,
		Senders: map[string]senderEnd{
			"s1": {Port: 10000, Report: &senderReport{Summary: pktgen.Summary{PPS: 9500, USec: 2e6, Threads: []pktgen.ThreadSummary{
				{Src: "198.18.0.1", Packets: 9500, PPS: 5000}, {Src: "198.18.0.2", Packets: 9500, PPS: 4950}}}}},
		},
		Receivers: map[string]receiverEnd{
			"r1": {Dst: ip("198.18.0.101"), Report: &recv.Report{Streams: []recv.StreamReport{
				{Src: ip("198.18.0.1"), Dst: ip("198.18.0.101"), DstPort: 10000, Received: 9500},
				{Src: ip("198.18.0.2"), Dst: ip("198.18.0.101"), DstPort: 10000, Received: 9500},
			}}},
		},
	}
	flows, _ := reconcileRun(in)
	if len(flows) != 1 || flows[0].AchievedPPS != 9950 || flows[0].GeneratorLimited {
		t.Fatalf("flows %+v: want achieved 9950 pps (the threads' own), not generator limited", flows)
	}
}
