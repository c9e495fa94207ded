package coordinator

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/linerate/linerate/pktgen"
	recv "github.com/linerate/linerate/receiver"
)

// Packets a receiver saw but could not count (streams beyond its table)
// are the flow's Uncounted, before any drop, and never network loss.
func TestReconcileUncounted(t *testing.T) {
	f := Reconcile(FlowInput{Streams: []Stream{{Sent: 1065}}, Uncounted: 1065, ReceiverHostDrops: 5, SenderHostDrops: 5})
	if f.Lost != 1065 || f.Uncounted != 1065 || f.LostNetwork != 0 || f.LostReceiverHost != 0 || f.LostSenderHost != 0 {
		t.Errorf("%+v", f)
	}
	f = Reconcile(FlowInput{Streams: []Stream{{Sent: 100, StreamReport: recv.StreamReport{Received: 40}}}, Uncounted: 50, ReceiverHostDrops: 4})
	if f.Uncounted != 50 || f.LostReceiverHost != 4 || f.LostNetwork != 6 {
		t.Errorf("some of each: %+v", f)
	}
}

// The fan-in: 34 streams into a receiver whose table held 32.
// The two streams it has no count of are uncounted, not lost in the
// network, even where another flow listed first lost packets of its own;
// the warning names the receiver, the numbers and the table.
func TestReconcileRunUncounted(t *testing.T) {
	in := runCounts{Senders: map[string]senderEnd{}, Receivers: map[string]receiverEnd{}}
	rep := &recv.Report{OverflowPackets: 1065 + 1118}
	for i := range 17 {
		name := fmt.Sprintf("s%d", i+1)
		in.Pairs = append(in.Pairs, Pair{Sender: name, Receiver: "r1"})
		sr := &senderReport{Summary: pktgen.Summary{USec: 1e6}}
		for k := range 2 {
			src := fmt.Sprintf("198.18.%d.%d", k, i+1)
			sent := uint64(1000)
			switch {
			case i == 15 && k == 1:
				sent = 1065
			case i == 16 && k == 1:
				sent = 1118
			}
			sr.Threads = append(sr.Threads, pktgen.ThreadSummary{Src: src, Packets: sent})
			got := sent
			switch {
			case i == 0 && k == 0:
				got = 990 // lost in the network
			case sent != 1000:
				continue // beyond the table: not in the report
			}
			rep.Streams = append(rep.Streams, recv.StreamReport{Src: netip.MustParseAddr(src), Dst: netip.MustParseAddr("198.18.0.101"), DstPort: uint16(10000 + i), Received: got, MaxSeq: got})
		}
		in.Senders[name] = senderEnd{Port: 10000 + i, Report: sr}
	}
	in.Receivers["r1"] = receiverEnd{Dst: netip.MustParseAddr("198.18.0.101"), Report: rep, Table: 32}
	flows, warnings := reconcileRun(in)
	if len(flows) != 17 {
		t.Fatalf("%d flows", len(flows))
	}
	var lost, network, uncounted uint64
	for _, f := range flows {
		lost, network, uncounted = lost+f.Lost, network+f.LostNetwork, uncounted+f.Uncounted
	}
	if lost != 10+1065+1118 || network != 10 || uncounted != 1065+1118 || flows[0].Uncounted != 0 || flows[15].Uncounted != 1065 || flows[16].Uncounted != 1118 {
		t.Errorf("lost %d, network %d, uncounted %d (flows 0, 15, 16: %d %d %d)", lost, network, uncounted, flows[0].Uncounted, flows[15].Uncounted, flows[16].Uncounted)
	}
	want := "r1: uncounted: 2183 test packets beyond its table of 32 streams (34 streams planned): they arrived, not lost; the run is partial"
	if !slices.Contains(warnings, want) {
		t.Errorf("warnings %q, want %q", warnings, want)
	}
	// Sequence 0: received, but said, not silent.
	rep.OverflowPackets, rep.Streams[1].BeyondCapacity = 0, 7
	_, warnings = reconcileRun(in)
	if want := "r1: 7 test packets of 1 streams with sequence 0"; len(warnings) != 1 || !strings.HasPrefix(warnings[0], want) {
		t.Errorf("warnings %q, want one starting %q", warnings, want)
	}
	// Late: what the window could not tell apart is said.
	rep.Streams[1].BeyondCapacity, rep.Streams[1].Late = 0, 3
	_, warnings = reconcileRun(in)
	if want := "r1: 3 test packets of 1 streams arrived after their sequence left its window: each a duplicate or the late first copy of a sequence counted lost"; len(warnings) != 1 || !strings.HasPrefix(warnings[0], want) {
		t.Errorf("warnings %q, want one starting %q", warnings, want)
	}
}

// A run whose receiver could not count some test packets is partial,
// never ok: the host carries the count, the flow calls it uncounted, and
// nothing of it is network loss.
func TestRunUncountedIsPartial(t *testing.T) {
	c, spec, agents := fanIn17(t, 2000)
	r1 := agents[len(agents)-1]
	r1.expect = r1.expect[:len(r1.expect)-1] // s17's second stream: beyond the table
	r1.overflow = 1000
	res, err := (&Runner{Cluster: c, Dial: c.dial}).Run(context.Background(), spec)
	if err != nil || res.Status != StatusPartial {
		t.Fatalf("%v: status %s, want partial", err, res.Status)
	}
	last := res.Flows[len(res.Flows)-1]
	if last.Lost != 1000 || last.Uncounted != 1000 || last.LostNetwork != 0 {
		t.Errorf("flow %s: lost %d, uncounted %d, network %d", last.Sender, last.Lost, last.Uncounted, last.LostNetwork)
	}
	for _, h := range res.Hosts {
		if h.Name == "r1" && h.Uncounted != 1000 {
			t.Errorf("r1: uncounted %d, want 1000", h.Uncounted)
		}
	}
	want := "r1: uncounted: 1000 test packets beyond its table of 50 streams (34 streams planned)"
	if !slices.ContainsFunc(res.Warnings, func(w string) bool { return strings.HasPrefix(w, want) }) {
		t.Errorf("warnings %q, want %q", res.Warnings, want)
	}
}

// Packets the receiver's XDP program could not record in their window
// (CPUs contending for one word) leave the count unsure: the run is
// partial, the host says how many, a warning why.
func TestRunUnrecordedIsPartial(t *testing.T) {
	c, spec, agents := fanIn17(t, 2000)
	r1 := agents[len(agents)-1]
	r1.expect[3].Unrecorded = 2
	res, err := (&Runner{Cluster: c, Dial: c.dial}).Run(context.Background(), spec)
	if err != nil || res.Status != StatusPartial {
		t.Fatalf("%v: status %s, want partial", err, res.Status)
	}
	for _, h := range res.Hosts {
		if h.Name == "r1" && h.Unrecorded != 2 {
			t.Errorf("r1: unrecorded %d, want 2", h.Unrecorded)
		}
	}
	want := "r1: 2 test packets of 1 streams could not be recorded in its window"
	if !slices.ContainsFunc(res.Warnings, func(w string) bool { return strings.HasPrefix(w, want) && strings.HasSuffix(w, "the run is partial") }) {
		t.Errorf("warnings %q, want %q … the run is partial", res.Warnings, want)
	}
}
