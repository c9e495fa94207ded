// Package resultstest makes realistic result documents for tests: a
// campaign of 64, 512 and 1518-byte frames searched with RFC 2544 over
// two pairwise flows between four 10 GbE hosts (and the same with RFC
// 2544's latency test), and a single run. The numbers are computed the
// way the coordinator computes them (coordinator.Reconcile), so they
// balance, and every packet received has its one-way delay, as a
// receiver with latency on (the default) records them; times and ids are
// fixed, so reports of them can be golden files.
package resultstest

import (
	"encoding/json"
	"fmt"
	"math"
	"net/netip"
	"strconv"
	"time"

	"github.com/linerate/linerate/coordinator"
	"github.com/linerate/linerate/coordinator/campaign"
	"github.com/linerate/linerate/coordinator/results"
	"github.com/linerate/linerate/doctor"
	"github.com/linerate/linerate/latency"
	"github.com/linerate/linerate/pktgen"
	"github.com/linerate/linerate/receiver"
	"github.com/linerate/linerate/topology"
)

// Start is when the test campaign started.
var Start = time.Date(2026, 12, 1, 3, 15, 0, 0, time.UTC)

// CampaignID is the test campaign's id.
const CampaignID = "20261201T031500Z-3f9a1c"

// LinkMbps is every test host's link speed.
const LinkMbps = 10000

// Capacity is the device under test's forwarding limit per flow, as a
// fraction of line rate, by frame size: it drops what is offered above
// it. 512 and 1518-byte frames pass at line rate.
var Capacity = map[int]float64{64: 0.83, 512: 1, 1518: 1}

const trialSec = 10

// Hosts are the four hosts: senders s1, s2 on NUMA node 0 and receivers
// r1, r2 on node 1, each an X710 (i40e) with four queue IRQs pinned 1:1.
func Hosts() []results.Fingerprint {
	host := func(name, role string, node, irq0, cpu0 int, backend, method string) results.Fingerprint {
		iface := "ens801f0"
		pins := make([]coordinator.IRQPin, 4)
		for q := range pins {
			pins[q] = coordinator.IRQPin{Queue: q, IRQ: irq0 + q, CPU: cpu0 + 2*q, Name: fmt.Sprintf("i40e-%s-TxRx-%d", iface, q), Dir: "txrx"}
		}
		return results.Fingerprint{
			Name: name, Role: role, Kernel: "6.1.0-28-amd64", Driver: "i40e",
			Firmware: "9.20 0x8000d8c5 1.3353.0", NIC: "0000:3b:00.0 Intel Ethernet Controller X710 for 10GbE SFP+",
			Iface: iface, LinkSpeedMbps: LinkMbps, NUMANode: node, IRQMap: pins,
			Backend: backend, Method: method, Version: "v0.4.0",
		}
	}
	return []results.Fingerprint{
		host("s1", "sender", 0, 57, 2, "kernel", ""),
		host("s2", "sender", 0, 57, 2, "kernel", ""),
		host("r1", "receiver", 1, 88, 1, "", "xdp"),
		host("r2", "receiver", 1, 88, 1, "", "xdp"),
	}
}

// flows reconciles the two pairwise flows of a trial offered `offered`
// pps per flow to a device that forwards at most capacity pps per flow.
func flows(size int, offered, capacity float64) []coordinator.Flow {
	var out []coordinator.Flow
	for i, pair := range [][2]string{{"s1", "r1"}, {"s2", "r2"}} {
		sent := uint64(offered * trialSec)
		recv := sent
		if offered > capacity {
			recv = uint64(capacity * trialSec)
		}
		// Flow 2's receiver host drops a few under overload: host loss,
		// not network loss.
		var hostDrops uint64
		if i == 1 && recv < sent {
			hostDrops = (sent - recv) / 100
		}
		out = append(out, coordinator.Reconcile(coordinator.FlowInput{
			Sender: pair[0], Receiver: pair[1],
			Streams:           []coordinator.Stream{pairStream(i, sent, recv, delays(i, size, recv, offered/capacity, capacity))},
			ReceiverHostDrops: hostDrops,
			DurationSec:       trialSec,
			FrameBytes:        float64(size - pktgen.FCSBytes),
			LinkSpeedMbps:     LinkMbps,
			OfferedPPS:        offered,
			AchievedPPS:       offered,
		}))
	}
	return out
}

// pairStream is the one stream of pair i's flow (sender 198.18.0.i+1 to
// receiver 198.18.0.101+i, port 10000+i), sent packets sent and
// received recv, with delays l.
func pairStream(i int, sent, recv uint64, l *latency.Latency) coordinator.Stream {
	return coordinator.Stream{Sent: sent, StreamReport: receiver.StreamReport{
		Src: netip.AddrFrom4([4]byte{198, 18, 0, byte(i + 1)}), Dst: netip.AddrFrom4([4]byte{198, 18, 0, byte(101 + i)}),
		DstPort: uint16(10000 + i), Received: recv, Latency: l,
	}}
}

// QueueFrames is how many frames the device under test queues before it
// drops: offered more than it forwards, every frame waits for a full
// queue.
const QueueFrames = 4096

// delays are the one-way delays of the recv packets pair i's flow
// received, frames of size bytes, at load times the device's capacity of
// capacity pps per flow, on clocks the coordinator estimated (pair i's
// bound 14 + 5i µs). The path takes 5 + i µs plus the frame's time on
// the wire twice (the device stores and forwards); the device's queue
// adds an exponential wait whose mean grows with the load, truncated at
// twelve means; overloaded, the queue is full and a frame waits
// 90-110 % of QueueFrames ÷ capacity. Filled bucket by bucket from the
// distribution (recv can be 10^8), so that the samples are the packets
// received exactly.
func delays(i, size int, recv uint64, load, capacity float64) *latency.Latency {
	if recv == 0 {
		return nil
	}
	base := 5 + float64(i) + 2*float64(size*8)/LinkMbps
	lo, mean := math.Round(base), 0.5+load/(1.02-load)
	hi := math.Round(base + 12*mean)
	if load > 1 {
		full := QueueFrames / capacity * 1e6
		lo, mean, hi = math.Round(base+0.9*full), 0.03*full, math.Round(base+1.1*full)
	}
	cdf := func(d float64) float64 {
		d = min(max(d, lo), hi)
		return (1 - math.Exp(-(d-lo)/mean)) / (1 - math.Exp(-(hi-lo)/mean))
	}
	l := &latency.Latency{Clock: latency.Estimated, ClockErrorUs: float64(14 + 5*i)}
	h := &l.Histogram
	first, last := -1, 0
	for b := latency.Bucket(uint64(lo)); b <= latency.Bucket(uint64(hi)); b++ {
		blo, w := latency.BucketRange(b)
		c := uint64(math.Round(float64(recv)*cdf(float64(blo+w)))) - uint64(math.Round(float64(recv)*cdf(float64(blo))))
		if c == 0 {
			continue
		}
		if first < 0 {
			first = b
		}
		last = b
		h.Counts[b] = c
		h.SumUs += c * (blo + (w-1)/2)
	}
	flo, _ := latency.BucketRange(first)
	llo, lw := latency.BucketRange(last)
	h.MinUs, h.MaxUs = max(flo, uint64(lo)), min(llo+lw-1, uint64(hi))
	h.Jitter16, h.JitterN = uint64(16*mean), recv-1
	return l
}

// Campaign is a complete NDR/PDR campaign document as the campaign
// runner writes one: per size short trials ("initial") narrowing from
// 100 % of line rate down to the device's capacity, then a full-duration
// trial ("final") at the rate found; the summary sums the flows.
func Campaign() *results.Document { return campaignOf(0) }

// LatencyTrials is how many RFC 2544 latency trials
// CampaignWithLatencyTest runs per size.
const LatencyTrials = 2

// CampaignWithLatencyTest is Campaign with RFC 2544's latency test: after
// each size's search, LatencyTrials trials at its throughput rate, whose
// delays together are the size's latency.
func CampaignWithLatencyTest() *results.Document { return campaignOf(LatencyTrials) }

// campaignOf is the campaign, with latencyTrials latency trials per size.
func campaignOf(latencyTrials int) *results.Document {
	hosts := Hosts()
	fields := map[string]any{
		"name": "x710-lab-qualification", "agents": map[string]any{"senders": []string{"s1", "s2"}, "receivers": []string{"r1", "r2"}},
		"pattern": "pairwise", "frame_sizes": []int{64, 512, 1518},
		"search": map[string]any{"type": "ndr-pdr", "goals": []float64{0, 0.005}, "resolution": "1%"}, "trial_duration": "10s",
	}
	if latencyTrials > 0 {
		fields["latency"] = map[string]any{"trials": latencyTrials, "trial_duration": "10s"}
	}
	spec, _ := json.Marshal(fields)
	d := &results.Document{
		Schema: results.Schema, ID: CampaignID, Kind: results.KindCampaign, Name: "x710-lab-qualification",
		Created: Start, Tool: "v0.4.0", Status: "ok", Spec: spec, Hosts: hosts,
		Summary: []results.SizeResult{}, Trials: []results.Trial{},
	}
	n := 0
	for _, size := range []int{64, 512, 1518} {
		line := pktgen.LinePPS(LinkMbps, float64(size-4))
		capacity := Capacity[size] * line
		steps := []struct {
			phase string
			frac  float64
		}{{"initial", 1}}
		if Capacity[size] < 1 {
			steps = append(steps, []struct {
				phase string
				frac  float64
			}{{"initial", 0.5}, {"initial", 0.75}, {"initial", 0.875}, {"initial", 0.8125}, {"initial", 0.84375}}...)
		}
		best := -1
		for _, st := range steps {
			n++
			t := trial(n, size, st.phase, st.frac*line, capacity)
			if t.Passed && (best < 0 || t.OfferedPPS > d.Trials[best].OfferedPPS) {
				best = len(d.Trials)
			}
			d.Trials = append(d.Trials, t)
		}
		n++
		confirm := trial(n, size, "final", d.Trials[best].OfferedPPS, capacity)
		d.Trials = append(d.Trials, confirm)
		row := results.SizeResult{Size: size, Trials: len(steps) + 1, ThroughputTrial: confirm.N, LossRatio: confirm.LossRatio, NDRPPS: 0}
		for _, f := range confirm.Flows {
			row.ThroughputPPS += f.PPS
			row.L1BPS += f.L1BPS
		}
		row.LineRatePct = 100 * row.ThroughputPPS / results.LineRatePPS(hosts, confirm.Flows, float64(size))
		row.NDRPPS = row.ThroughputPPS
		row.PDRPPS = row.ThroughputPPS
		if Capacity[size] < 1 {
			row.PDRPPS = 2 * 0.83 * line // the 0.5 % goal is met right at capacity
		}
		row.PDRGoal = 0.005
		var ls []*latency.Latency
		for range latencyTrials {
			n++
			t := trial(n, size, campaign.PhaseLatency, confirm.OfferedPPS, capacity)
			d.Trials = append(d.Trials, t)
			ls = append(ls, t.Latency())
		}
		if latencyTrials > 0 {
			row.Latency, row.LatencyTrials = latency.Merge(ls...), latencyTrials
		}
		d.Summary = append(d.Summary, row)
	}
	d.Finished = Start.Add(time.Duration(n) * (trialSec + 5) * time.Second)
	return d
}

func trial(n, size int, phase string, offered, capacity float64) results.Trial {
	fl := flows(size, offered, capacity)
	t := results.Trial{
		N: n, Size: size, Search: "ndr-pdr", Phase: phase, OfferedPPS: offered, DurationSec: trialSec,
		Valid: true, RunID: fmt.Sprintf("%s-%012x", Start.Add(time.Duration(n)*15*time.Second).Format("20060102T150405Z"), n), Flows: fl,
	}
	for _, f := range fl {
		t.Sent += f.Sent
		t.Received += f.Received
		t.Lost += f.Lost
		t.AchievedPPS += float64(f.Sent) / trialSec / float64(len(fl))
	}
	t.LossRatio = float64(t.Lost) / float64(t.Sent)
	t.Passed = t.Lost == 0
	return t
}

// Run is a single run's document (kind run): two pairwise flows of
// 512-byte frames at 2 Mpps each for 10 s, one of them losing 1 in 1000
// in the network.
func Run() *results.Document {
	started := Start.Add(-24 * time.Hour)
	res := &coordinator.Result{
		RunID: "20261130T031500Z-0a1b2c3d4e5f", Status: coordinator.StatusOK, Pattern: "pairwise", FrameSize: 512,
		RatePPS: 2_000_000, Started: started, Finished: started.Add(13 * time.Second), StartSkewUS: 42,
	}
	for i, pair := range [][2]string{{"s1", "r1"}, {"s2", "r2"}} {
		sent := uint64(20_000_000)
		recv := sent
		if i == 1 {
			recv -= sent / 1000
		}
		res.Flows = append(res.Flows, coordinator.Reconcile(coordinator.FlowInput{
			Sender: pair[0], Receiver: pair[1],
			Streams:     []coordinator.Stream{pairStream(i, sent, recv, delays(i, 512, recv, 2e6/pktgen.LinePPS(LinkMbps, 508), pktgen.LinePPS(LinkMbps, 508)))},
			DurationSec: trialSec, FrameBytes: 508, LinkSpeedMbps: LinkMbps, OfferedPPS: 2e6, AchievedPPS: 2e6,
		}))
	}
	for _, h := range Hosts() {
		host := coordinator.Host{
			Name: h.Name, Role: h.Role, Kernel: h.Kernel, Iface: h.Iface, Driver: h.Driver, NUMANode: h.NUMANode,
			LinkSpeedMbps: h.LinkSpeedMbps, IRQMap: h.IRQMap, SkippedIRQs: []coordinator.SkippedIRQ{}, Tuned: "restored",
			Backend: h.Backend, Method: h.Method, IRQVerify: firedAsPlanned(h),
		}
		host.Checks, host.Facts = hostChecks(h.Name)
		for _, c := range host.Checks {
			if c.Status.Warns() {
				res.Warnings = append(res.Warnings, coordinator.CheckWarning(h.Name, c))
			}
		}
		for _, f := range res.Flows {
			if f.Sender == h.Name {
				host.Sent += f.Sent
			}
			if f.Receiver == h.Name {
				host.Received += f.Received
			}
		}
		res.Hosts = append(res.Hosts, host)
	}
	d := results.FromRun(res)
	d.Name = "512B-2Mpps"
	d.Tool = "v0.4.0"
	d.Spec = json.RawMessage(`{"senders":["s1","s2"],"receivers":["r1","r2"],"pattern":"pairwise","frame_size":512,"rate_pps":2000000,"duration":"10s"}`)
	return d
}

// hostChecks are a host's checks before the run as its agent makes them
// (a few of doctor's, in its order): s2's CPUs run the powersave
// governor (WARN) and r2's NIC has flow control on (FAIL, which a run
// with --preflight warn reports and runs anyway); and what they read.
func hostChecks(name string) ([]doctor.Check, *doctor.Facts) {
	pass := func(id, title, ev string) doctor.Check {
		return doctor.Check{ID: id, Title: title, Status: doctor.Pass, Evidence: []string{ev}, Why: "."}
	}
	gov := pass("governor", "CPU frequency governor", "/sys/devices/system/cpu/cpu2/cpufreq/scaling_governor: performance")
	pause := pass("flow-control", "Ethernet flow control", "ethtool -a "+"eth1: autoneg off, rx off, tx off")
	facts := &doctor.Facts{CPUModel: "Intel(R) Xeon(R) Gold 6230 CPU @ 2.10GHz", Microcode: "0x5003604", Governor: "performance",
		Rings: "rx 4096/4096, tx 4096/4096", Coalesce: "adaptive-rx off, rx-usecs 0", Pause: "autoneg off, rx off, tx off", Offloads: "gro off, lro off, tso off, gso off"}
	switch name {
	case "s2":
		gov = doctor.Check{ID: "governor", Title: "CPU frequency governor", Status: doctor.Warn, Volatile: true,
			Evidence: []string{"/sys/devices/system/cpu/cpu2/cpufreq/scaling_governor: powersave", "/sys/devices/system/cpu/cpu3/cpufreq/scaling_governor: powersave"},
			Why:      "A CPU that ramps its clock up under load adds latency and jitter to the first packets of a run.",
			Fix:      "echo performance | tee /sys/devices/system/cpu/cpu{2,3}/cpufreq/scaling_governor", FixClass: doctor.FixGovernor}
		facts.Governor = "powersave"
	case "r2":
		pause = doctor.Check{ID: "flow-control", Title: "Ethernet flow control", Status: doctor.Fail,
			Evidence: []string{"ethtool -a eth1: autoneg on, rx on, tx on"},
			Why:      "With pause frames on, a receiver that cannot keep up slows its sender instead of dropping: loss turns into silent back-pressure.",
			Fix:      "ethtool -A eth1 autoneg off rx off tx off", FixClass: doctor.FixFlowControl}
		facts.Pause = "autoneg on, rx on, tx on"
	}
	return []doctor.Check{pass("irqbalance", "irqbalance", "/proc/*/comm: no irqbalance process"), gov, pause}, facts
}

// firedAsPlanned is a host whose queue IRQs each fired on the CPU the
// run pinned it to over the 10 s trial.
func firedAsPlanned(h results.Fingerprint) *topology.VerifyResult {
	v := &topology.VerifyResult{Iface: h.Iface, Interval: "10s", IRQs: []topology.VerifiedIRQ{}}
	for _, p := range h.IRQMap {
		n := uint64(250_000 + 1000*p.Queue)
		v.IRQs = append(v.IRQs, topology.VerifiedIRQ{
			IRQ: p.IRQ, Name: p.Name, Queue: p.Queue, Planned: strconv.Itoa(p.CPU), Source: "journal",
			Fired: map[string]uint64{strconv.Itoa(p.CPU): n}, Total: n,
		})
	}
	return v
}
