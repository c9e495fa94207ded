package coordinator

import (
	"testing"

	"github.com/linerate/linerate/latency"
	"github.com/linerate/linerate/pktgen"
	recv "github.com/linerate/linerate/receiver"
)

// A kernel pktgen thread that waited 200 µs a frame after stamping it
// (a paced 5 kpps thread) has its stream's delays taken 200 µs lower, and
// the flow says so; a userspace thread's stream (no wait) is left as
// measured; the receiver's own report is not changed.
func TestReconcileRunTakesOffPacingWait(t *testing.T) {
	delays := func(us int64, n int) *latency.Latency {
		var r latency.Recorder
		for range n {
			r.Record(us)
		}
		return &latency.Latency{Histogram: r.H, Clock: latency.SameHost}
	}
	kernelLat, userLat := delays(20250, 1000), delays(20050, 1000)
	in := runCounts{
		Pairs:      []Pair{{Sender: "s1", Receiver: "r1"}, {Sender: "s2", Receiver: "r1"}},
		FrameBytes: 60,
		Senders: map[string]senderEnd{
			"s1": {Port: 10000, Report: &senderReport{Summary: pktgen.Summary{Backend: "kernel", USec: 1e6, Threads: []pktgen.ThreadSummary{
				{Src: "198.18.0.1", Packets: 1000, PacingWaitUSec: 200_000}}}}},
			"s2": {Port: 10001, Report: &senderReport{Summary: pktgen.Summary{Backend: "xdp", USec: 1e6, Threads: []pktgen.ThreadSummary{
				{Src: "198.18.0.2", Packets: 1000}}}}},
		},
		Receivers: map[string]receiverEnd{
			"r1": {Dst: ip("198.18.0.101"), Report: &recv.Report{Streams: []recv.StreamReport{
				{Src: ip("198.18.0.1"), Dst: ip("198.18.0.101"), DstPort: 10000, Received: 1000, Latency: kernelLat},
				{Src: ip("198.18.0.2"), Dst: ip("198.18.0.101"), DstPort: 10001, Received: 1000, Latency: userLat},
			}}},
		},
	}
	flows, warnings := reconcileRun(in)
	if len(flows) != 2 || len(warnings) != 0 {
		t.Fatalf("%d flows, warnings %q", len(flows), warnings)
	}
	k, u := flows[0].Latency, flows[1].Latency
	if ks := k.Summary(); ks.MinUs != 20050 || ks.MaxUs != 20050 || ks.Samples != 1000 || k.StampCorrectionUs != 200 {
		t.Errorf("kernel flow: %+v, %v µs taken off; want 20050 µs, 200 taken off", ks, k.StampCorrectionUs)
	}
	if s := flows[0].StreamDetail[0].Latency; s.StampCorrectionUs != 200 || s.MinUs != 20050 {
		t.Errorf("kernel stream: %v µs taken off, min %d", s.StampCorrectionUs, s.MinUs)
	}
	if us := u.Summary(); us.MinUs != 20050 || u.StampCorrectionUs != 0 {
		t.Errorf("userspace flow: %+v, %v µs taken off; want as measured", us, u.StampCorrectionUs)
	}
	if kernelLat.MinUs != 20250 || kernelLat.StampCorrectionUs != 0 {
		t.Errorf("the receiver's report was changed: min %d, %v taken off", kernelLat.MinUs, kernelLat.StampCorrectionUs)
	}
}
