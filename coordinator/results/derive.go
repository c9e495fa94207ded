package results

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/linerate/linerate/coordinator"
	"github.com/linerate/linerate/latency"
	"github.com/linerate/linerate/pktgen"
)

// Key names a summary row: its frame size ("64"), or for a mix its
// label ("imix 7:4:1"), or "imix".
func (r SizeResult) Key() string {
	if r.Size > 0 {
		return strconv.Itoa(r.Size)
	}
	if r.Label != "" {
		return r.Label
	}
	return "imix"
}

// Latency is the delays of every flow of the trial together, on the
// least certain of their clocks (nil: none was timed).
func (t Trial) Latency() *latency.Latency {
	var ls []*latency.Latency
	for _, f := range t.Flows {
		ls = append(ls, f.Latency)
	}
	return latency.Merge(ls...)
}

// Rows is the document's summary, one row per frame size: Summary, or
// for a run document stored without one, the row RunSummary derives
// from its run.
func (d *Document) Rows() []SizeResult {
	if len(d.Summary) > 0 || d.Run == nil {
		return d.Summary
	}
	return []SizeResult{RunSummary(d.Run)}
}

// AllTrials is the document's trials: Trials, or for a run document
// stored without any, the one trial RunTrial derives from its run.
func (d *Document) AllTrials() []Trial {
	if len(d.Trials) > 0 || d.Run == nil {
		return d.Trials
	}
	return []Trial{RunTrial(d.Run)}
}

// ThroughputTrialOf returns the trial that set r's throughput: the one
// r.ThroughputTrial names, or (documents that do not say) the valid,
// passed trial of r's size with the highest offered rate, the latest on
// a tie, never a back-to-back burst. nil when there is none.
func (d *Document) ThroughputTrialOf(r SizeResult) *Trial {
	trials := d.AllTrials()
	if r.ThroughputTrial > 0 {
		for i := range trials {
			if trials[i].N == r.ThroughputTrial {
				return &trials[i]
			}
		}
	}
	var best *Trial
	for i := range trials {
		t := &trials[i]
		if t.Size != r.Size || !t.Valid || !t.Passed || t.Burst > 0 { // a back-to-back burst is no load
			continue
		}
		if best == nil || t.OfferedPPS >= best.OfferedPPS {
			best = t
		}
	}
	return best
}

// LineRatePPS is the theoretical maximum, in frames per second summed
// over flows, for frames of frameBytes (Ethernet frame with FCS, as the
// summary counts it) sent as equal-rate flows between hosts: each
// host's link carries the flows that start or end there, so a flow can
// go no faster than pktgen.LinePPS(link) / flows on its busiest link, and the
// total is that times the number of flows. For pairwise flows over equal
// links this is pktgen.LinePPS(slowest link) × flows; fan-in and
// fan-out are bound by the shared link. Without flows it is the slowest
// link times the number of sender hosts (at least one). 0 when no host
// knows its link speed.
func LineRatePPS(hosts []Fingerprint, flows []coordinator.Flow, frameBytes float64) float64 {
	pps, _ := LinkLineRate(hosts, flows, frameBytes)
	return pps
}

// LinkLineRate is LineRatePPS and what sets it, for a report to say:
// "s1's 10 Gb/s link, shared by 2 flows" (the busiest link), or "the
// slowest link (1 Gb/s)". 0 and "" when no host knows its link speed.
func LinkLineRate(hosts []Fingerprint, flows []coordinator.Flow, frameBytes float64) (pps float64, basis string) {
	if frameBytes <= pktgen.FCSBytes {
		return 0, ""
	}
	frame := frameBytes - pktgen.FCSBytes
	speed := make(map[string]int64, len(hosts))
	slowest := int64(0)
	senders := 0
	for _, h := range hosts {
		if h.LinkSpeedMbps > 0 {
			speed[h.Name] = h.LinkSpeedMbps
			if slowest == 0 || h.LinkSpeedMbps < slowest {
				slowest = h.LinkSpeedMbps
			}
		}
		if h.Role == "sender" {
			senders++
		}
	}
	if slowest == 0 {
		return 0, ""
	}
	slowestBasis := fmt.Sprintf("the slowest link (%s)", FormatSI(float64(slowest)*1e6, "b/s"))
	if len(flows) == 0 {
		n := max(senders, 1)
		return pktgen.LinePPS(float64(slowest), frame) * float64(n), fmt.Sprintf("%s × %d sender(s)", slowestBasis, n)
	}
	count := map[string]int{}
	for _, f := range flows {
		count[f.Sender]++
		count[f.Receiver]++
	}
	names := make([]string, 0, len(count))
	for name := range count {
		names = append(names, name)
	}
	sort.Strings(names) // the same basis whichever map order
	perFlow := math.Inf(1)
	for _, name := range names {
		n := count[name]
		if s, ok := speed[name]; ok {
			if p := pktgen.LinePPS(float64(s), frame) / float64(n); p < perFlow {
				perFlow = p
				basis = fmt.Sprintf("%s's %s link", name, FormatSI(float64(s)*1e6, "b/s"))
				if n > 1 {
					basis += fmt.Sprintf(", shared by %d flows", n)
				}
			}
		}
	}
	if math.IsInf(perFlow, 1) {
		// No flow's host knows its speed: the slowest link per flow.
		perFlow, basis = pktgen.LinePPS(float64(slowest), frame), slowestBasis+" per flow"
	}
	return perFlow * float64(len(flows)), basis
}

// FingerprintOf is the fingerprint of a run's host (the tool version is
// the caller's to add).
func FingerprintOf(h coordinator.Host) Fingerprint {
	irqs := h.IRQMap
	if irqs == nil {
		irqs = []coordinator.IRQPin{}
	}
	fp := Fingerprint{
		Name:          h.Name,
		Role:          h.Role,
		Kernel:        h.Kernel,
		Driver:        h.Driver,
		Firmware:      h.Firmware,
		NIC:           strings.TrimSpace(h.Model + " " + h.PCI),
		Iface:         h.Iface,
		LinkSpeedMbps: h.LinkSpeedMbps,
		NUMANode:      h.NUMANode,
		IRQMap:        irqs,
		Backend:       h.Backend,
		Method:        h.Method,
		XDPMode:       h.XDPMode,
	}
	if f := h.Facts; f != nil {
		fp.Facts = *f
		fp.Facts.Firmware = "" // the fingerprint's own Firmware holds it
		if fp.Firmware == "" {
			fp.Firmware = f.Firmware
		}
	}
	for _, c := range h.Checks {
		if fp.Checks == nil {
			fp.Checks = map[string]string{}
		}
		fp.Checks[c.ID] = string(c.Status)
	}
	return fp
}

// FromRun makes the document of one run (kind run): id, times, status
// and error from the result, one summary row (RunSummary), one trial
// (RunTrial), a fingerprint per host, and the result itself under
// "run". The caller adds Name, Spec and Tool (and the fingerprints'
// tool version).
func FromRun(res *coordinator.Result) *Document {
	d := &Document{
		Schema:   Schema,
		ID:       res.RunID,
		Kind:     KindRun,
		Created:  res.Started,
		Finished: res.Finished,
		Status:   res.Status,
		Error:    res.Error,
		Summary:  []SizeResult{RunSummary(res)},
		Trials:   []Trial{RunTrial(res)},
		Hosts:    make([]Fingerprint, 0, len(res.Hosts)),
		Run:      res,
	}
	for _, h := range res.Hosts {
		d.Hosts = append(d.Hosts, FingerprintOf(h))
	}
	return d
}

// RunDocument is the document a command stores of run res, written by
// the tool of version: FromRun, with that version on the document and on
// every host, and the path's own counts (the lab's) when the run has
// them.
func RunDocument(res *coordinator.Result, version string) *Document {
	d := FromRun(res)
	d.Tool, d.Lab = version, res.Lab
	for i := range d.Hosts {
		d.Hosts[i].Version = version
	}
	return d
}

// RunSummary is a run's summary row: its frame size, the received rate
// summed over flows as the throughput (a run does not search: this is
// what the offered load achieved), L1 rate, % of LineRatePPS, and the
// loss ratio over all flows.
func RunSummary(res *coordinator.Result) SizeResult {
	r := SizeResult{Size: res.FrameSize, Trials: 1, ThroughputTrial: 1}
	var sent, lost uint64
	for _, f := range res.Flows {
		r.ThroughputPPS += f.PPS
		r.L1BPS += f.L1BPS
		sent += f.Sent
		lost += f.Lost
		r.GeneratorLimited = r.GeneratorLimited || f.GeneratorLimited
	}
	if sent > 0 {
		r.LossRatio = float64(lost) / float64(sent)
	}
	hosts := make([]Fingerprint, 0, len(res.Hosts))
	for _, h := range res.Hosts {
		hosts = append(hosts, FingerprintOf(h))
	}
	mix := coordinator.Spec{FrameSize: res.FrameSize, IMIX: res.IMIX}
	if top := LineRatePPS(hosts, res.Flows, mix.MeanFrame()+pktgen.FCSBytes); top > 0 {
		r.LineRatePct = 100 * r.ThroughputPPS / top
	}
	if res.RatePPS > 0 {
		r.Note = "run at " + FormatPPS(float64(res.RatePPS)) + " per flow"
	} else {
		r.Note = "run as fast as possible"
	}
	return r
}

// RunTrial is a run as the one trial of its document: its flows'
// tally (Tally), over the flows' send window. It is valid when the run
// ended ok and no flow was generator-limited, and passed when nothing
// was lost.
func RunTrial(res *coordinator.Result) Trial {
	t := Trial{N: 1, Size: res.FrameSize, OfferedPPS: float64(res.RatePPS), RunID: res.RunID, Error: res.Error}
	t.Tally(res.Flows)
	for _, f := range res.Flows {
		if w := f.Window(); w > 0 {
			t.DurationSec = w
			break
		}
	}
	t.Valid = res.Status == coordinator.StatusOK && !t.GeneratorLimited
	t.Passed = t.Valid && t.Lost == 0
	return t
}

// Tally fills a trial's flows and what they add up to: packets sent,
// received and lost, the loss ratio, the achieved rate (AchievedPPS) and
// whether any flow was generator-limited.
func (t *Trial) Tally(flows []coordinator.Flow) {
	t.Flows = flows
	for _, f := range flows {
		t.Sent += f.Sent
		t.Received += f.Received
		t.Lost += f.Lost
		t.GeneratorLimited = t.GeneratorLimited || f.GeneratorLimited
	}
	if t.Sent > 0 {
		t.LossRatio = float64(t.Lost) / float64(t.Sent)
	}
	t.AchievedPPS = AchievedPPS(flows)
}

// AchievedPPS is a trial's achieved rate per flow: the mean over its
// flows of what their senders reached (Flow.AchievedPPS, over the send
// window). It is the one derivation of the rate: a campaign's trials, a
// run's trial and the reports' figures all come from it.
func AchievedPPS(flows []coordinator.Flow) float64 {
	if len(flows) == 0 {
		return 0
	}
	var sum float64
	for _, f := range flows {
		sum += f.AchievedPPS
	}
	return sum / float64(len(flows))
}
