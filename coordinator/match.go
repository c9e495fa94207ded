package coordinator

import "fmt"

// runCounts is what a run's reconciliation works from: its flows and
// each end's account of them, with no agent or RPC in it.
type runCounts struct {
	Pairs     []Pair
	Senders   map[string]senderEnd
	Receivers map[string]receiverEnd
	// FrameBytes is the mean frame size without FCS, OfferedPPS the
	// requested rate per flow (0: as fast as possible).
	FrameBytes, OfferedPPS float64
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
	Dst           string // the data address its flows are sent to
	Report        *receiverReport
	LinkSpeedMbps int64
}

// reconcileRun balances every flow from the senders' per-thread counts
// and the receivers' per-stream counts: a thread's stream is the one
// from its source to its flow's receiver, at its sender's port. A host's
// drops are shared out over its flows in order, never counted twice. A
// flow without both ends' reports has no result, and a stream the
// receiver counted that no thread sent is a warning.
func reconcileRun(in runCounts) (flows []Flow, warnings []string) {
	txBudget := map[string]uint64{}
	rxBudget := map[string]uint64{}
	flowsOf := map[string]int{}
	for name, s := range in.Senders {
		if s.Report != nil {
			txBudget[name] = s.Report.TxDropped
		}
	}
	for name, r := range in.Receivers {
		if r.Report != nil {
			rxBudget[name] = r.Report.HostDrops
		}
	}
	for _, p := range in.Pairs {
		flowsOf[p.Sender]++
	}
	for i, p := range in.Pairs {
		s, rcv := in.Senders[p.Sender], in.Receivers[p.Receiver]
		if s.Report == nil || rcv.Report == nil {
			warnings = append(warnings, fmt.Sprintf("flow %s → %s: no result (sender summary %t, receiver report %t)", p.Sender, p.Receiver, s.Report != nil, rcv.Report != nil))
			continue
		}
		fin := FlowInput{
			Sender: p.Sender, Receiver: p.Receiver,
			SenderHostDrops:   txBudget[p.Sender],
			ReceiverHostDrops: rxBudget[p.Receiver],
			DurationSec:       s.Report.WindowSec,
			FrameBytes:        in.FrameBytes,
			LinkSpeedMbps:     float64(minPositive(s.LinkSpeedMbps, rcv.LinkSpeedMbps)),
			OfferedPPS:        in.OfferedPPS,
			AchievedPPS:       s.Report.PPS,
		}
		matched := map[string]bool{}
		var threadPPS float64
		for j, t := range s.Report.Threads {
			if j < len(s.FlowOf) && s.FlowOf[j] != i {
				continue // another flow's thread
			}
			fin.NotSent += t.Errors
			threadPPS += t.PPS
			st := Stream{Src: t.Src, Dst: rcv.Dst, DstPort: s.Port}
			for _, rs := range rcv.Report.Streams {
				if rs.DstPort == s.Port && rs.Src == t.Src && rs.Dst == rcv.Dst {
					st = rs
					matched[rs.Src] = true
				}
			}
			st.Sent = t.Packets
			fin.Streams = append(fin.Streams, st)
		}
		for _, rs := range rcv.Report.Streams {
			if rs.DstPort == s.Port && !matched[rs.Src] {
				warnings = append(warnings, fmt.Sprintf("flow %s → %s: %d packets of an unknown stream from %s to port %d (not sent in this run)", p.Sender, p.Receiver, rs.Received, rs.Src, s.Port))
			}
		}
		if flowsOf[p.Sender] > 1 {
			fin.AchievedPPS = threadPPS // this flow's threads only
		}
		f := Reconcile(fin)
		txBudget[p.Sender] -= f.LostSenderHost
		rxBudget[p.Receiver] -= f.LostReceiverHost
		flows = append(flows, f)
	}
	return flows, warnings
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
