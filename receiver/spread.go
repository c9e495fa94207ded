package receiver

import (
	"fmt"
	"slices"
	"strings"
)

// SpreadQueues is how many receive queues a stream's spread tells apart
// (StreamReport.Queues): queues 0 to SpreadQueues-2 each, and the last
// entry every queue from SpreadQueues-1 up (a NIC with more queues than
// that is rare; its high queues are then reported together).
const SpreadQueues = 64

// spreadBytes is one stream's per-queue packet counts on one CPU (the XDP
// program's lr_queues value, the AF_XDP sockets' per-queue tables).
const spreadBytes = SpreadQueues * 8

// QueuePackets is how many of one stream's packets arrived on one receive
// queue of the receiving interface: where its RSS (or its flow steering)
// put them.
type QueuePackets struct {
	Queue   uint32 `json:"queue"`
	Packets uint64 `json:"packets"`
}

// QueueSpread is one receive queue's share of the test traffic: how many
// streams had packets on it and how many packets those were.
type QueueSpread struct {
	Queue   uint32 `json:"queue"`
	Streams int    `json:"streams"`
	Packets uint64 `json:"packets"`
}

// KnowsQueues says whether m tells the receive queue of every packet it
// counts: the XDP program reads the frame's rx_queue_index, an AF_XDP
// socket is bound to one queue; an AF_PACKET ring is not told (a
// TPACKET_V3 frame carries no queue, and the fanout is by CPU).
func (m Method) KnowsQueues() bool { return m == MethodXDP || m == MethodAFXDP }

// Spread sums the streams' Queues by queue, in queue order: the RSS
// spread of a receiver (nil when no stream says its queues).
func Spread(streams []StreamReport) []QueueSpread {
	by := map[uint32]*QueueSpread{}
	for _, s := range streams {
		for _, q := range s.Queues {
			e := by[q.Queue]
			if e == nil {
				e = &QueueSpread{Queue: q.Queue}
				by[q.Queue] = e
			}
			e.Streams++
			e.Packets += q.Packets
		}
	}
	out := make([]QueueSpread, 0, len(by))
	for _, e := range by {
		out = append(out, *e)
	}
	slices.SortFunc(out, func(a, b QueueSpread) int { return int(a.Queue) - int(b.Queue) })
	if len(out) == 0 {
		return nil
	}
	return out
}

// SpreadText is a receiver's RSS spread on one line, queue by queue:
// "q0 3 streams 1500 packets, q1 1 stream 500 packets"; what a method
// that cannot know says instead; "no test packets" when none arrived.
func SpreadText(m Method, streams []StreamReport) string {
	if !m.KnowsQueues() {
		return fmt.Sprintf("not known (%s: a ring is not told which receive queue a frame came in on)", m)
	}
	sp := Spread(streams)
	if len(sp) == 0 {
		return "no test packets"
	}
	parts := make([]string, 0, len(sp))
	for _, q := range sp {
		name := fmt.Sprint("q", q.Queue)
		if q.Queue == SpreadQueues-1 {
			name += "+"
		}
		word := "streams"
		if q.Streams == 1 {
			word = "stream"
		}
		parts = append(parts, fmt.Sprintf("%s %d %s %d packets", name, q.Streams, word, q.Packets))
	}
	return strings.Join(parts, ", ")
}

// queueCounts turns per-queue packet counts (index: queue) into a
// stream's Queues, the queues with packets only, in queue order.
func queueCounts(per []uint64) []QueuePackets {
	var out []QueuePackets
	for q, n := range per {
		if n > 0 {
			out = append(out, QueuePackets{Queue: uint32(q), Packets: n})
		}
	}
	return out
}
