package coordinator

import (
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/linerate/linerate/internal/cluster/gossip"
	"github.com/linerate/linerate/latency"
	lineratev1 "github.com/linerate/linerate/proto/linerate/v1"
	recv "github.com/linerate/linerate/receiver"
)

// A flow's delays are its streams' merged, and they are stated on the
// clock the two hosts share: one kernel, two synchronised clocks (the
// errors summed), or none, which is warned of.
func TestFlowLatencyClocks(t *testing.T) {
	stream := func(port uint16, delays ...int64) Stream {
		var r latency.Recorder
		for _, d := range delays {
			r.Record(d)
		}
		return Stream{StreamReport: recv.StreamReport{DstPort: port, Received: uint64(len(delays)),
			Latency: &latency.Latency{Histogram: r.H, Clock: latency.Unsynchronised}}, Sent: uint64(len(delays))}
	}
	f := Reconcile(FlowInput{Sender: "s", Receiver: "r", Streams: []Stream{stream(9, 10, 20), stream(10, 30)}})
	if f.Latency == nil || f.Latency.Samples() != 3 || f.Latency.MinUs != 10 || f.Latency.MaxUs != 30 || f.Latency.SumUs != 60 {
		t.Fatalf("flow latency %+v", f.Latency)
	}
	for _, tc := range []struct {
		name   string
		s, r   *Clock
		want   latency.Clock
		errUs  float64
		warned bool
	}{
		{"one kernel", &Clock{BootID: "k"}, &Clock{BootID: "k"}, latency.SameHost, 0, false},
		{"synchronised", &Clock{BootID: "a", Synchronised: true, EstErrorUS: 30}, &Clock{BootID: "b", Synchronised: true, EstErrorUS: 12}, latency.Synchronised, 42, false},
		{"one not synchronised", &Clock{BootID: "a", Synchronised: true}, &Clock{BootID: "b"}, latency.Unsynchronised, 0, true},
		{"unreadable", &Clock{BootID: "a", Synchronised: true}, &Clock{BootID: "b", Synchronised: true, Error: "EPERM"}, latency.Unsynchronised, 0, true},
		{"unknown", nil, &Clock{BootID: "b"}, latency.Unsynchronised, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			flows := []Flow{Reconcile(FlowInput{Sender: "s", Receiver: "r", Streams: []Stream{stream(9, 10)}})}
			clocks := map[string]*Clock{"s": tc.s, "r": tc.r}
			w := stateLatencyClocks(flows, func(s, r string) (latency.Clock, float64) { return latencyClock(clocks[s], clocks[r]) })
			l, sl := flows[0].Latency, flows[0].StreamDetail[0].Latency
			if l.Clock != tc.want || l.ClockErrorUs != tc.errUs || sl.Clock != tc.want || sl.ClockErrorUs != tc.errUs {
				t.Errorf("flow on %s ±%g, stream on %s ±%g; want %s ±%g", l.Clock, l.ClockErrorUs, sl.Clock, sl.ClockErrorUs, tc.want, tc.errUs)
			}
			if warned := len(w) == 1 && strings.Contains(w[0], "s → r: the two clocks are not synchronised"); warned != tc.warned || len(w) > 1 {
				t.Errorf("warnings %q", w)
			}
		})
	}
}

// A receiver's live sample merges its streams' delays so far per flow,
// each named by its sender from the stream's port; a stream of another
// port, or without delays, is left out.
func TestLiveLatency(t *testing.T) {
	hist := func(delays ...int64) *lineratev1.Latency {
		var r latency.Recorder
		for _, d := range delays {
			r.Record(d)
		}
		l := latency.Latency{Histogram: r.H, Clock: latency.SameHost}
		var p lineratev1.Latency
		p.Clock, p.MinUs, p.MaxUs, p.SumUs = string(l.Clock), l.MinUs, l.MaxUs, l.SumUs
		for b, c := range l.Counts {
			if c != 0 {
				lo, _ := latency.BucketRange(b)
				p.Buckets = append(p.Buckets, &lineratev1.LatencyBucket{LoUs: lo, Count: c})
			}
		}
		return &p
	}
	resp := &lineratev1.WatchResponse{Time: timestamppb.Now(), Receiver: &lineratev1.ReceiverSample{Packets: 9, Streams: []*lineratev1.StreamCounters{
		{DstPort: 10001, Latency: hist(10, 20, 30)},
		{DstPort: 10000, Latency: hist(100)},
		{DstPort: 10001, Latency: hist(40)},
		{DstPort: 10000},
		{DstPort: 9, Latency: hist(5)},
	}}}
	senders := map[uint32]string{10000: "s1", 10001: "s2"}
	s, ok := sampleOf(resp, "r1", gossip.RoleReceiver, func(p uint32) string { return senders[p] })
	want := []FlowLatency{{Sender: "s2", Samples: 4, P50US: 20, P99US: 40}, {Sender: "s1", Samples: 1, P50US: 100, P99US: 100}}
	if !ok || !slices.Equal(s.Latency, want) {
		t.Errorf("live latency %+v, want %+v", s.Latency, want)
	}
}
