package coordinator

import (
	"net/netip"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/linerate/linerate/latency"
	recv "github.com/linerate/linerate/receiver"
)

// A run's latency mode: oneway by default, rtt with its rate's default,
// and one clear error for a mode that is not one, round trips with
// receivers that cannot reflect, a latency stream's rate past its bound,
// and latency ports past 65535.
func TestSpecLatency(t *testing.T) {
	base := func() Spec { return Spec{Senders: []string{"s1", "s2"}, Receivers: []string{"r1", "r2"}, Count: 10} }
	s := base()
	if err := s.Validate(); err != nil || s.Latency != LatencyOneWay || s.RTTRate != 0 {
		t.Errorf("default: %v, latency %q, rtt rate %d", err, s.Latency, s.RTTRate)
	}
	s = base()
	s.Latency = LatencyRTT
	if err := s.Validate(); err != nil || s.RTTRate != latency.DefaultRTTRate {
		t.Errorf("rtt: %v, rtt rate %d, want %d", err, s.RTTRate, latency.DefaultRTTRate)
	}
	for _, tt := range []struct {
		edit func(*Spec)
		want string
	}{
		{func(s *Spec) { s.Latency = "bogus" }, `latency "bogus": valid latency modes are oneway, rtt and off`},
		{func(s *Spec) { s.Latency, s.Method = LatencyRTT, recv.MethodAFPacket },
			"latency rtt with receiver method afpacket: receivers reflect the latency stream with XDP_TX, which the afpacket method cannot: give method xdp or auto, or latency oneway"},
		{func(s *Spec) { s.Latency, s.RTTRate = LatencyRTT, latency.MaxRTTRate+1 }, "rtt rate 10001 pps: want 1 to 10000 (0: 1000)"},
		{func(s *Spec) { s.Latency, s.BasePort = LatencyRTT, 65533 },
			"base port 65533: latency rtt takes ports 65533 to 65536 (the load's, then each sending host's latency stream): want a base port of at most 65532"},
		{func(s *Spec) { s.Latency, s.Bidir = LatencyRTT, true },
			"latency rtt with bidir: a host that sends and receives would need two XDP programs on its interface, the receiver's and the one that times the returns: run latency oneway both ways, or latency rtt one way (or with reverse)"},
	} {
		s := base()
		tt.edit(&s)
		if err := s.Validate(); err == nil || err.Error() != tt.want {
			t.Errorf("%+v: %v, want %q", s, err, tt.want)
		}
	}
}

// Each sender's latency stream has its own port after every load port;
// a receiver reflects the ports of the senders that send to it, and is
// sized for one more stream per flow.
func TestRTTPlan(t *testing.T) {
	spec := Spec{Senders: []string{"s1", "s2"}, Receivers: []string{"r1"}, Pattern: FanIn, Count: 10, Latency: LatencyRTT}
	if err := spec.Validate(); err != nil {
		t.Fatal(err)
	}
	pairs, _ := Pairs(spec.Pattern, spec.Senders, spec.Receivers)
	st := &runState{spec: spec, pairs: pairs}
	for _, name := range []string{"s1", "s2", "r1"} {
		st.order = append(st.order, &node{m: Member{Name: name}, role: roleIn(pairs, name)})
	}
	r1 := &node{m: Member{Name: "r1"}}
	if got := st.reflectPorts(r1); !slices.Equal(got, []uint32{10002, 10003}) {
		t.Errorf("r1 reflects %v, want 10002 and 10003 (after the load's 10000 and 10001)", got)
	}
	if rs := st.rttStream(&node{m: Member{Name: "s2"}}); rs == nil || rs.Port != 10003 || rs.RatePps != latency.DefaultRTTRate {
		t.Errorf("s2's latency stream %+v", rs)
	}
	if st.receiverLatency() != recv.LatencyOneWay {
		t.Errorf("receivers with rtt: %s, want oneway too", st.receiverLatency())
	}
	loads := []streamLoad{{Threads: 2}, {Threads: 2}}
	with := sizeReceiver(spec, loads)
	spec.Latency = LatencyOneWay
	without := sizeReceiver(spec, loads)
	if with.Streams != without.Streams+2 {
		t.Errorf("streams with rtt %d, without %d: want one latency stream per flow more", with.Streams, without.Streams)
	}
	// Turned round, the named receivers send: theirs are the load's
	// ports and, after them, the latency streams'.
	rev := Spec{Senders: []string{"s1"}, Receivers: []string{"r1", "r2"}, Pattern: FanOut, Count: 10, Latency: LatencyRTT, Reverse: true}
	if err := rev.Validate(); err != nil {
		t.Fatal(err)
	}
	rpairs, _ := rev.FlowPairs()
	rst := &runState{spec: rev, pairs: rpairs}
	for _, name := range []string{"s1", "r1", "r2"} {
		rst.order = append(rst.order, &node{m: Member{Name: name}, role: roleIn(rpairs, name)})
	}
	if got := rst.reflectPorts(&node{m: Member{Name: "s1"}}); !slices.Equal(got, []uint32{10002, 10003}) {
		t.Errorf("reverse: s1 reflects %v, want 10002 and 10003 (after r1's and r2's load ports)", got)
	}
	if p1, p2 := rst.portOf("r1"), rst.portOf("r2"); p1 != 10000 || p2 != 10001 {
		t.Errorf("reverse: load ports %d %d", p1, p2)
	}
	st.spec = spec
	if st.reflectPorts(r1) != nil || st.rttStream(&node{m: Member{Name: "s1"}}) != nil {
		t.Error("oneway: ports to reflect or a latency stream")
	}
	st.spec.Latency = LatencyOff
	if st.receiverLatency() != recv.LatencyOff {
		t.Errorf("off: receivers %s", st.receiverLatency())
	}
}

// A flow's round trips: the sender's count of its latency stream and of
// the returns, the receiver's of the stream it received and reflected;
// lost both ways from them; the round trips and the lowest per second
// as the sender measured them.
func TestRTTOf(t *testing.T) {
	a, b := netip.MustParseAddr("198.18.0.1"), netip.MustParseAddr("198.18.0.2")
	var r latency.Recorder
	r.Record(12)
	sent := []senderRTT{
		{Dst: netip.MustParseAddr("198.18.0.9"), Port: 10002, Sent: 7},
		{Dst: b, Port: 10002, Sent: 1000, LowestUs: []uint64{9, 7, 8},
			Returned: recv.StreamReport{Src: b, Dst: a, DstPort: 10002, Received: 990, Latency: &latency.Latency{Histogram: r.H, Clock: latency.SameHost}}},
	}
	rcv := &recv.Report{Streams: []recv.StreamReport{
		{Src: a, Dst: b, DstPort: 10000, Received: 5000},
		{Src: a, Dst: b, DstPort: 10002, Received: 996, Reflected: 996, MaxSeq: 1000, Missing: 4, MissingRanges: [][2]uint64{{7, 9}, {500, 500}}},
	}}
	got := rttOf(sent, rcv, b, 10002)
	want := &RTT{Port: 10002, Sent: 1000, Received: 996, Reflected: 996, Returned: 990, LostOut: 4, LostBack: 6,
		MaxSeq: 1000, MissingRanges: [][2]uint64{{7, 9}, {500, 500}},
		Latency: sent[1].Returned.Latency, Lowest: &latency.Lowest{PerSecondUs: []uint64{9, 7, 8}, MedianUs: 8, MinUs: 7}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("rtt (-want +got):\n%s", diff)
	}
	if rttOf(sent, rcv, netip.MustParseAddr("198.18.0.3"), 10002) != nil {
		t.Error("a receiver the sender sent no latency stream to has round trips")
	}
}

// A flow whose receiver reflected none of the latency stream it received
// (an agent that predates it ignores reflect_ports) or whose sender
// reported no latency stream is a warning naming the flow and why.
func TestAttachRTTWarnings(t *testing.T) {
	a, b := netip.MustParseAddr("198.18.0.1"), netip.MustParseAddr("198.18.0.2")
	spec := Spec{Senders: []string{"s1", "s2"}, Receivers: []string{"r1", "r2"}, Count: 10, Latency: LatencyRTT}
	if err := spec.Validate(); err != nil {
		t.Fatal(err)
	}
	st := &runState{spec: spec, res: &Result{}, nodes: map[string]*node{
		"s1": {m: Member{Name: "s1"}, rtt: []senderRTT{{Dst: b, Port: 10002, Sent: 10}}},
		"s2": {m: Member{Name: "s2"}},
		"r1": {m: Member{Name: "r1"}, dst: b, received: &recv.Report{Streams: []recv.StreamReport{{Src: a, Dst: b, DstPort: 10002, Received: 10}}}},
		"r2": {m: Member{Name: "r2"}, dst: netip.MustParseAddr("198.18.0.3")},
	}}
	for _, name := range []string{"s1", "s2", "r1", "r2"} {
		n := st.nodes[name]
		n.role = roleIn([]Pair{{Sender: "s1", Receiver: "r1"}, {Sender: "s2", Receiver: "r2"}}, name)
		st.order = append(st.order, n)
	}
	flows := []Flow{{Sender: "s1", Receiver: "r1"}, {Sender: "s2", Receiver: "r2"}}
	st.attachRTT(flows)
	want := []string{
		"flow s1 → r1: no round trips: r1 received 10 frames of the latency stream and reflected none (an agent that predates --latency rtt?)",
		"flow s2 → r2: no round trips: the sender reported no latency stream to 198.18.0.3 (its warnings say why)",
	}
	if diff := cmp.Diff(want, st.res.Warnings); diff != "" || flows[0].RTT == nil || flows[0].RTT.LostOut != 0 || flows[1].RTT != nil {
		t.Errorf("warnings (-want +got):\n%s\nflows %+v", diff, flows)
	}
}
