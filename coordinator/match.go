package coordinator

import (
	"fmt"
	"net/netip"
	"slices"

	recv "github.com/linerate/linerate/receiver"
)

// runCounts is what a run's reconciliation works from: its flows and
// each end's account of them, with no agent or RPC in it.
type runCounts struct {
	Pairs     []Pair
	Senders   map[string]senderEnd
	Receivers map[string]receiverEnd
	// FrameBytes is the mean frame size without FCS, OfferedPPS the
	// requested rate per flow (0: as fast as possible).
	FrameBytes, OfferedPPS float64
	// Burst is kernel pktgen's burst (FlowInput.Burst).
	Burst int
}

// senderEnd is one sender at the end of a run.
type senderEnd struct {
	Port          int   // the UDP destination port of all its streams
	FlowOf        []int // the flow (index into Pairs) of each thread; nil: all one flow
	Report        *senderReport
	LinkSpeedMbps int64
}

// receiverEnd is one receiver at the end of a run.
type receiverEnd struct {
	Dst           netip.Addr // the data address its flows are sent to
	Report        *recv.Report
	LinkSpeedMbps int64
	Table         int // the stream table it was armed with (0: unknown)
}

// reconcileRun balances every flow from the senders' per-thread counts
// and the receivers' per-stream counts: a thread's stream is the one
// from its source to its flow's receiver, at its sender's port. A host's
// drops are shared out over its flows in order, never counted twice; so
// are a receiver's uncounted packets (streams beyond its table), first to
// the streams it has no count of at all (shareUncounted). A flow without
// both ends' reports has no result; a stream the receiver counted that no
// thread sent, packets it could not count, packets with sequence 0 and
// late ones are warnings (receiverWarnings).
func reconcileRun(in runCounts) (flows []Flow, warnings []string) {
	txBudget := map[string]uint64{}
	rxBudget := map[string]uint64{}
	flowsOf := map[string]int{}
	for name, s := range in.Senders {
		if s.Report != nil {
			// A frame the kernel refused because the driver dropped it
			// (NET_XMIT_DROP: a veth peer's full backlog) is in the
			// device's tx_dropped too, yet the backend sent it again: no
			// loss.
			txBudget[name] = s.Report.TxDropped - min(s.Report.TxDropped, s.Report.Errors)
		}
	}
	for name, r := range in.Receivers {
		if r.Report != nil {
			rxBudget[name] = r.Report.HostDrops()
		}
	}
	for _, p := range in.Pairs {
		flowsOf[p.Sender]++
	}
	var fins []FlowInput
	for i, p := range in.Pairs {
		s, rcv := in.Senders[p.Sender], in.Receivers[p.Receiver]
		if s.Report == nil || rcv.Report == nil {
			warnings = append(warnings, fmt.Sprintf("flow %s → %s: no result (sender summary %t, receiver report %t)", p.Sender, p.Receiver, s.Report != nil, rcv.Report != nil))
			continue
		}
		fin := FlowInput{
			Sender: p.Sender, Receiver: p.Receiver, Direction: p.Direction,
			DurationSec:   s.Report.Seconds(),
			FrameBytes:    in.FrameBytes,
			LinkSpeedMbps: float64(minPositive(s.LinkSpeedMbps, rcv.LinkSpeedMbps)),
			OfferedPPS:    in.OfferedPPS,
			AchievedPPS:   s.Report.PPS,
			Burst:         in.Burst,
		}
		matched := map[netip.Addr]bool{}
		var threadPPS float64
		for j, t := range s.Report.Threads {
			if j < len(s.FlowOf) && s.FlowOf[j] != i {
				continue // another flow's thread
			}
			fin.Refused += t.Errors
			threadPPS += t.PPS
			src, _ := netip.ParseAddr(t.Src) // none or not an address: no receiver's stream is its
			st := Stream{StreamReport: recv.StreamReport{Src: src, Dst: rcv.Dst, DstPort: uint16(s.Port)}}
			for _, rs := range rcv.Report.Streams {
				if int(rs.DstPort) == s.Port && rs.Src == src && rs.Dst == rcv.Dst {
					st.StreamReport = rs
					matched[rs.Src] = true
				}
			}
			st.Sent, st.FirstFrameNs = t.Packets, t.FirstFrameNs
			st.Latency = stampCorrected(st.Latency, t)
			fin.Streams = append(fin.Streams, st)
		}
		for _, rs := range rcv.Report.Streams {
			if int(rs.DstPort) == s.Port && !matched[rs.Src] {
				warnings = append(warnings, fmt.Sprintf("flow %s → %s: %d packets of an unknown stream from %s to port %d (not sent in this run)", p.Sender, p.Receiver, rs.Received, rs.Src, s.Port))
			}
		}
		if flowsOf[p.Sender] > 1 || threadPPS > 0 {
			// The flow's threads' own rates, each over its own time
			// sending: the rate the generator kept up. The summary's
			// rate spans the first thread's start to the last one's
			// stop, and kernel pktgen's threads start up to a poll
			// (100 ms) apart: 5 % of a 2 s trial read as shortfall.
			fin.AchievedPPS = threadPPS
		}
		fins = append(fins, fin)
	}
	shareUncounted(fins, in.Receivers)
	for _, fin := range fins {
		fin.SenderHostDrops, fin.ReceiverHostDrops = txBudget[fin.Sender], rxBudget[fin.Receiver]
		f := Reconcile(fin)
		txBudget[fin.Sender] -= f.LostSenderHost
		rxBudget[fin.Receiver] -= f.LostReceiverHost
		flows = append(flows, f)
	}
	return flows, append(warnings, receiverWarnings(in.Pairs, fins, in.Receivers)...)
}

// shareUncounted shares each receiver's overflow (test packets of
// streams beyond its table) out over its flows as their Uncounted: first
// to the streams it has no count of (sent, none received: the ones left
// out of the table), then to any other loss, in flow order.
func shareUncounted(fins []FlowInput, receivers map[string]receiverEnd) {
	left := map[string]uint64{}
	for name, r := range receivers {
		if r.Report != nil {
			left[name] = r.Report.OverflowPackets
		}
	}
	for _, unseenOnly := range []bool{true, false} {
		for i := range fins {
			var want uint64
			for _, s := range fins[i].Streams {
				if !unseenOnly || s.Received == 0 {
					want += s.lost(fins[i].Burst)
				}
			}
			n := min(want-min(fins[i].Uncounted, want), left[fins[i].Receiver])
			fins[i].Uncounted += n
			left[fins[i].Receiver] -= n
		}
	}
}

// receiverWarnings say, per receiver in run order, how many test packets
// it could not count (streams beyond its table) and how many had sequence
// 0: neither is loss, and either leaves the run short of a full account;
// and how many arrived late or could not be recorded in its window.
func receiverWarnings(pairs []Pair, fins []FlowInput, receivers map[string]receiverEnd) []string {
	var out []string
	for _, name := range receiverOrder(pairs) {
		r := receivers[name]
		if r.Report == nil {
			continue
		}
		planned := 0
		for _, fin := range fins {
			if fin.Receiver == name {
				planned += len(fin.Streams)
			}
		}
		// Over every stream the receiver reported, strays included, as
		// the host's beyond_capacity counts them.
		var beyondStreams, lateStreams, unrecStreams int
		var beyond, late, unrec uint64
		for _, s := range r.Report.Streams {
			if s.BeyondCapacity > 0 {
				beyondStreams++
				beyond += s.BeyondCapacity
			}
			if s.Late > 0 {
				lateStreams++
				late += s.Late
			}
			if s.Unrecorded > 0 {
				unrecStreams++
				unrec += s.Unrecorded
			}
		}
		if n := r.Report.OverflowPackets; n > 0 {
			table := "its stream table"
			if r.Table > 0 {
				table = fmt.Sprintf("its table of %d streams", r.Table)
			}
			out = append(out, fmt.Sprintf("%s: uncounted: %d test packets beyond %s (%d streams planned): they arrived, not lost; the run is partial", name, n, table, planned))
		}
		if beyond > 0 {
			out = append(out, fmt.Sprintf("%s: %d test packets of %d streams with sequence 0 (outside the numbering): received, not checked for duplicates, order or gaps; the run is partial", name, beyond, beyondStreams))
		}
		if late > 0 {
			out = append(out, fmt.Sprintf("%s: %d test packets of %d streams arrived after their sequence left its window: each a duplicate or the late first copy of a sequence counted lost, which the window cannot tell apart", name, late, lateStreams))
		}
		if unrec > 0 {
			out = append(out, fmt.Sprintf("%s: %d test packets of %d streams could not be recorded in its window (CPUs contending for one word): each a distinct sequence or a duplicate, which the count cannot tell; the run is partial", name, unrec, unrecStreams))
		}
	}
	return out
}

// receiverOrder are the receivers of pairs, each once, in order.
func receiverOrder(pairs []Pair) []string {
	var out []string
	for _, p := range pairs {
		if !slices.Contains(out, p.Receiver) {
			out = append(out, p.Receiver)
		}
	}
	return out
}

func minPositive(a, b int64) int64 {
	switch {
	case a <= 0:
		return max(b, 0)
	case b <= 0:
		return a
	}
	return min(a, b)
}
