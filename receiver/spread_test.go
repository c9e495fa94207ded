package receiver

import (
	"net/netip"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestSpread: the streams' queues summed by queue, in queue order, and the
// line a report prints; a method that cannot know says so.
func TestSpread(t *testing.T) {
	a, b := netip.MustParseAddr("198.18.0.1"), netip.MustParseAddr("198.19.0.1")
	streams := []StreamReport{
		{Src: a, Dst: b, DstPort: 9, Received: 300, Queues: []QueuePackets{{Queue: 0, Packets: 100}, {Queue: 3, Packets: 200}}},
		{Src: a, Dst: b, DstPort: 10, Received: 50, Queues: []QueuePackets{{Queue: 3, Packets: 50}}},
		{Src: a, Dst: b, DstPort: 11, Received: 7, Queues: []QueuePackets{{Queue: SpreadQueues - 1, Packets: 7}}},
	}
	want := []QueueSpread{{Queue: 0, Streams: 1, Packets: 100}, {Queue: 3, Streams: 2, Packets: 250}, {Queue: SpreadQueues - 1, Streams: 1, Packets: 7}}
	if diff := cmp.Diff(want, Spread(streams)); diff != "" {
		t.Errorf("spread (-want +got):\n%s", diff)
	}
	for _, tt := range []struct {
		m       Method
		streams []StreamReport
		want    string
	}{
		{MethodXDP, streams, "q0 1 stream 100 packets, q3 2 streams 250 packets, q63+ 1 stream 7 packets"},
		{MethodXDP, nil, "no test packets"},
		{MethodAFPacket, streams, "not known (afpacket: a ring is not told which receive queue a frame came in on)"},
	} {
		if got := SpreadText(tt.m, tt.streams); got != tt.want {
			t.Errorf("SpreadText(%s) = %q, want %q", tt.m, got, tt.want)
		}
	}
	if got := queueCounts([]uint64{0, 5, 0, 2}); !cmp.Equal(got, []QueuePackets{{Queue: 1, Packets: 5}, {Queue: 3, Packets: 2}}) {
		t.Errorf("queueCounts = %+v", got)
	}
}
