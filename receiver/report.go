package receiver

import (
	"net/netip"

	"github.com/linerate/linerate/latency"
)

// Report is what a receiver counted. Its JSON is the receiver half of a
// run's result.
type Report struct {
	// Method is MethodXDP, MethodAFPacket or MethodAFXDP; MethodReason
	// says why (for XDP and AF_XDP how the program attached, for AF_XDP
	// also the sockets' mode and need_wakeup, and why).
	Method       Method `json:"method"`
	MethodReason string `json:"method_reason"`
	// XDPMode is how the XDP program is attached: XDPNative (in the
	// driver) or XDPGeneric (after the skb is built, slower); absent for
	// afpacket.
	XDPMode string `json:"xdp_mode,omitempty"`
	// Packets is every frame the method saw: the streams' received, plus
	// OverflowPackets, plus OtherPackets.
	Packets uint64 `json:"packets"`
	// OtherPackets are frames without the pktgen magic (ARP, IPv6 ND, any
	// other traffic, IPv4 fragments after the first); they are never part
	// of a stream and the XDP method always passes them to the stack.
	OtherPackets uint64 `json:"other_packets"`
	// Streams are sorted by source, destination and port.
	Streams []StreamReport `json:"streams"`
	// Link holds the interface's counters, final minus baseline.
	Link LinkCounters `json:"link"`
	// RingDrops are the AF_PACKET rings' drops (PACKET_STATISTICS
	// tp_drops), or the AF_XDP sockets' (XDP_STATISTICS rx_dropped and
	// rx_ring_full): frames the kernel had for the receiver but no room
	// for. Always 0 for XDP, which cannot fall behind this way.
	RingDrops uint64 `json:"ring_drops"`
	// OverflowPackets are test packets of streams beyond
	// Options.MaxStreams, counted only here (absent when 0).
	OverflowPackets uint64 `json:"overflow_packets,omitempty"`
	// Window is the sequences per stream the receiver tracked one by one
	// (Options.Window): a packet older than that is late.
	Window uint64 `json:"window"`
}

// StreamReport is one stream: the packets with the pktgen magic from Src
// to Dst with UDP destination port DstPort. It is the receiving end's
// account of a stream wherever one is kept: `recv --json`, the Agent
// service's report (agent/convert.go) and each stream of a run's result,
// which the coordinator extends with the sending end's count
// (coordinator.Stream). Its fields are in the order a result lists them.
type StreamReport struct {
	Src     netip.Addr `json:"src"`
	Dst     netip.Addr `json:"dst"`
	DstPort uint16     `json:"dst_port"`
	// Received counts every packet of the stream, duplicates, late and
	// sequence-0 ones included.
	Received uint64 `json:"received"`
	// Duplicates are copies of a sequence already seen (more than
	// Options.Repeats copies with Repeats > 1) while it was in the window.
	Duplicates uint64 `json:"duplicates"`
	// Reordered are first copies that arrived after a higher sequence of
	// the same stream (see the package documentation for the cases where
	// this is per CPU).
	Reordered uint64 `json:"reordered"`
	// MaxSeq is the highest sequence seen, unwrapped past 2^32 (the wire
	// carries pktgen's 32 bits): a tail loss shows as MaxSeq below what
	// was sent.
	MaxSeq uint64 `json:"max_seq"`
	// Missing is the number of sequences in [1, MaxSeq] never seen as a
	// first copy within the window, head loss included (exact: MaxSeq
	// minus the first copies). MissingRanges lists the first
	// Options.MaxRanges runs of them as inclusive [from, to] pairs, from
	// sequence 1, those the window moved past included (recorded when it
	// evicted them; see the package documentation for the bound), absent
	// when there are none. When MissingRangesFrom is set (the XDP method
	// lost eviction records) it lists only those the window still held at
	// the end, from there on (Missing counts the ones below too). Snapshot
	// reports Missing without ranges.
	Missing           uint64      `json:"missing"`
	MissingRanges     [][2]uint64 `json:"missing_ranges,omitempty"`
	MissingRangesFrom uint64      `json:"missing_ranges_from,omitempty"`
	// Late are packets whose sequence was older than the window when they
	// arrived (Options.Window): each is either a duplicate or the late
	// first copy of a sequence that Missing counts; the window cannot tell
	// which. They are in Received and in no other counter (absent when 0).
	Late uint64 `json:"late,omitempty"`
	// Unrecorded are packets the XDP program could not record in the
	// window because other CPUs changed the same window word on every one
	// of its tries (see the package documentation): in Received, in no
	// other counter; while not 0, Missing may count their sequences
	// (absent when 0).
	Unrecorded uint64 `json:"unrecorded,omitempty"`
	// BeyondCapacity counts packets with sequence 0, outside pktgen's
	// numbering (which starts at 1): in Received, in no other counter
	// (absent when 0).
	BeyondCapacity uint64 `json:"beyond_capacity,omitempty"`
	// FirstArrivalNs is when the stream's first packet arrived, on the
	// receiver's realtime clock (Unix nanoseconds): the earliest over the
	// CPUs (rings) that saw the stream (absent when 0).
	FirstArrivalNs uint64 `json:"first_arrival_ns,omitempty"`
	// Latency is the delay of every packet in Received (its arrival less
	// the send time its header carries; copies sent on purpose, Repeats
	// > 1, share their first copy's send time), on the clock it states
	// (absent when latency is off).
	Latency *latency.Latency `json:"latency,omitempty"`
	// Reflected are the packets of Received sent back to their source
	// (Options.Reflect: a round trip's latency stream), absent when 0.
	Reflected uint64 `json:"reflected,omitempty"`
	// Queues are the stream's packets per receive queue, the queues with
	// packets in queue order: its RSS spread, in the final report of a
	// method that knows the queue (Method.KnowsQueues: xdp reads the
	// frame's rx_queue_index, afxdp has a socket per queue); absent from
	// snapshots and from afpacket, which cannot tell.
	Queues []QueuePackets `json:"queues,omitempty"`
}

// LinkCounters are interface counters: netlink stats64 and the sum of
// the driver's XDP statistics (ethtool -S). On a veth, frames an XDP
// program consumes are counted only in XDPPackets (and XDPDrops when it
// drops them), not in RxPackets; other drivers count every frame in
// RxPackets and may have no XDP packet counter (0 here).
type LinkCounters struct {
	RxPackets uint64 `json:"rx_packets"`
	// RxDropped is rx_dropped less the XDP_DROP verdicts of drivers that
	// count them there too (virtio_net): the host's drops, not the
	// receiver program's.
	RxDropped  uint64 `json:"rx_dropped"`
	RxMissed   uint64 `json:"rx_missed"` // rx_missed_errors
	RxFifo     uint64 `json:"rx_fifo"`   // rx_fifo_errors
	XDPPackets uint64 `json:"xdp_packets"`
	XDPDrops   uint64 `json:"xdp_drops"`
}

// sub returns c - base per counter (0 where a counter went backwards, as
// when the interface was re-created).
func (c LinkCounters) sub(base LinkCounters) LinkCounters {
	d := func(a, b uint64) uint64 {
		if a < b {
			return 0
		}
		return a - b
	}
	return LinkCounters{
		RxPackets: d(c.RxPackets, base.RxPackets), RxDropped: d(c.RxDropped, base.RxDropped),
		RxMissed: d(c.RxMissed, base.RxMissed), RxFifo: d(c.RxFifo, base.RxFifo),
		XDPPackets: d(c.XDPPackets, base.XDPPackets), XDPDrops: d(c.XDPDrops, base.XDPDrops),
	}
}

// HostDrops are the receiving host's drops before the receiver counted:
// its rings' drops, rx_dropped, rx_missed and rx_fifo. They are never the
// network's loss.
func (r Report) HostDrops() uint64 {
	return r.RingDrops + r.Link.RxDropped + r.Link.RxMissed + r.Link.RxFifo
}

// TestPackets is the number of packets that carried the pktgen magic.
func (r Report) TestPackets() uint64 {
	n := r.OverflowPackets
	for _, s := range r.Streams {
		n += s.Received
	}
	return n
}
