package report

import (
	"sort"

	"github.com/linerate/linerate/coordinator"
	"github.com/linerate/linerate/coordinator/results"
	"github.com/linerate/linerate/topology"
)

// sizeView is one summary row with what the reports derive from it.
type sizeView struct {
	results.SizeResult
	Key string
	// LinePPS is the line rate this size was measured against (0:
	// unknown), and Basis what set it.
	LinePPS float64
	Basis   string
	// Pct is the throughput as % of LinePPS (0: unknown).
	Pct float64
	// Trial set the throughput; nil when no trial did.
	Trial *results.Trial
}

// sizeViews are the document's rows in size order (mixes last).
func sizeViews(doc *results.Document) []sizeView {
	rows := append([]results.SizeResult(nil), doc.Rows()...)
	sort.SliceStable(rows, func(i, j int) bool { return results.SizeLess(rows[i].Size, rows[j].Size) })
	out := make([]sizeView, 0, len(rows))
	for _, r := range rows {
		v := sizeView{SizeResult: r, Key: r.Key(), Trial: doc.ThroughputTrialOf(r)}
		var flows []coordinator.Flow
		if v.Trial != nil {
			flows = v.Trial.Flows
		}
		v.LinePPS, v.Basis = r.LinePPS, r.LineBasis
		if v.LinePPS == 0 {
			// Stored before the campaign kept its line rate: the
			// hosts' links say what it was.
			v.LinePPS, v.Basis = results.LinkLineRate(doc.Hosts, flows, float64(r.Size))
		}
		if v.LinePPS == 0 && r.LineRatePct > 0 && r.ThroughputPPS > 0 {
			// A mix: its mean frame is not in the document, but the
			// stored % of line rate says what line rate was.
			v.LinePPS, v.Basis = 100*r.ThroughputPPS/r.LineRatePct, "as the stored % of line rate says"
		}
		if v.LinePPS > 0 {
			v.Pct = 100 * r.ThroughputPPS / v.LinePPS
		}
		out = append(out, v)
	}
	return out
}

// hostView is one host's part: its fingerprint and, over the flows of
// the trials that set the throughput (a run: its flows), what it sent,
// received and dropped itself.
type hostView struct {
	results.Fingerprint
	Flows    int
	Sent     uint64 // as sender
	Received uint64 // as receiver
	// HostLoss counts the packets lost inside this host (sender: after the
	// backend counted them; receiver: before the receiver counted them).
	HostLoss uint64
	// From a run's own host report.
	Tuned      string
	SendErrors uint64
	HostDrops  uint64
	Other      uint64
	Warnings   []string
	// Notes are the facts of its part that ask nothing of a person (its
	// IRQ plan's: queues wrapped onto fewer CPUs).
	Notes []string
	// IRQVerify is where the host's queue IRQs fired over the run's
	// traffic, IRQVerifyReason why there is no such record.
	IRQVerify       *topology.VerifyResult
	IRQVerifyReason string
}

func hostViews(doc *results.Document, sizes []sizeView) []hostView {
	out := make([]hostView, len(doc.Hosts))
	index := map[string]int{}
	for i, h := range doc.Hosts {
		out[i] = hostView{Fingerprint: h}
		index[h.Name] = i
	}
	for _, s := range sizes {
		if s.Trial == nil {
			continue
		}
		for _, f := range s.Trial.Flows {
			if i, ok := index[f.Sender]; ok {
				out[i].Flows++
				out[i].Sent += f.Sent
				out[i].HostLoss += f.LostSenderHost
			}
			if i, ok := index[f.Receiver]; ok {
				out[i].Flows++
				out[i].Received += f.Received
				out[i].HostLoss += f.LostReceiverHost
			}
		}
	}
	if doc.Run != nil {
		for _, h := range doc.Run.Hosts {
			if i, ok := index[h.Name]; ok {
				out[i].Tuned, out[i].SendErrors, out[i].HostDrops, out[i].Other, out[i].Warnings = h.Tuned, h.SendErrors, h.HostDrops, h.OtherFrames, h.Warnings
				out[i].IRQVerify, out[i].IRQVerifyReason, out[i].Notes = h.IRQVerify, h.IRQVerifyReason, h.Notes
			}
		}
	}
	return out
}

// trialCount is how many trials the document holds (a run: one).
func trialCount(doc *results.Document) int { return len(doc.AllTrials()) }
