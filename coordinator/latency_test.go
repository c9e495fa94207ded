package coordinator

import (
	"strings"
	"testing"

	"github.com/linerate/linerate/latency"
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
