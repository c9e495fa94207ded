package campaign

import (
	"context"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/linerate/linerate/coordinator"
	"github.com/linerate/linerate/coordinator/results"
	"github.com/linerate/linerate/internal/cluster/gossip"
	"github.com/linerate/linerate/latency"
	"github.com/linerate/linerate/pktgen"
	"github.com/linerate/linerate/receiver"
)

type members []coordinator.Member

func (m members) Members() []coordinator.Member { return m }

var lab2x2 = members{
	{Name: "s1", Tags: gossip.Tags{Role: "sender", SpeedMbps: 10000, Iface: "data0"}, Status: "alive"},
	{Name: "s2", Tags: gossip.Tags{Role: "sender", SpeedMbps: 10000, Iface: "data0"}, Status: "alive"},
	{Name: "r1", Tags: gossip.Tags{Role: "receiver", SpeedMbps: 1000, Iface: "data0"}, Status: "alive"},
	{Name: "r2", Tags: gossip.Tags{Role: "receiver", SpeedMbps: 10000, Iface: "data0"}, Status: "alive"},
	{Name: "x1", Tags: gossip.Tags{Role: "receiver", SpeedMbps: 10, Iface: "data0"}, Status: "failed"},
}

// dut is a simulated device under test: per flow it carries up to
// limit(size) pps without loss and drops the excess; the senders reach
// at most gen pps (0: any rate), or are slowed to the limit (pushback).
type dut struct {
	limit    func(size int) float64
	gen      float64
	pushback bool
	// delayUs, when set, times every packet a flow carries at rate pps
	// (per flow): the receivers' latency.
	delayUs func(rate float64) int64
	// buffer, when set, is the longest burst per flow of size-byte frames
	// the device carries (a Count run): it loses the rest of a longer one.
	buffer func(size int) uint64

	mu    sync.Mutex
	specs []coordinator.Spec
}

func (d *dut) run(_ context.Context, s coordinator.Spec) (*coordinator.Result, error) {
	d.mu.Lock()
	d.specs = append(d.specs, s)
	d.mu.Unlock()
	pairs, _ := coordinator.Pairs(s.Pattern, s.Senders, s.Receivers)
	res := &coordinator.Result{RunID: "run", Status: coordinator.StatusOK}
	for _, m := range lab2x2 { // every agent of the run, as a run reports them
		if slices.Contains(s.Senders, m.Name) || slices.Contains(s.Receivers, m.Name) {
			res.Hosts = append(res.Hosts, coordinator.Host{Name: m.Name, Role: string(m.Role), Kernel: "6.1", Driver: "veth", LinkSpeedMbps: m.SpeedMbps})
		}
	}
	secs := s.Duration.Seconds()
	for _, p := range pairs {
		achieved := float64(s.Rate)
		if d.gen > 0 {
			achieved = min(achieved, d.gen)
		}
		if d.pushback {
			achieved = min(achieved, d.limit(s.FrameSize))
		}
		sent := uint64(achieved * secs)
		carried := min(achieved, d.limit(s.FrameSize))
		recv := uint64(carried * secs)
		if s.Count > 0 {
			// A count goes at the rate the generator reaches: its frames
			// take count / achieved, and the device carries its share of
			// them (or, with a buffer, a burst's first frames).
			secs = float64(s.Count) / achieved
			sent, recv = s.Count, min(s.Count, uint64(math.Round(carried*secs)))
			if d.buffer != nil && isBurst(s) {
				recv = min(s.Count, d.buffer(s.FrameSize))
			}
		}
		st := coordinator.Stream{Sent: sent, StreamReport: receiver.StreamReport{Received: recv}}
		if d.delayUs != nil {
			var r latency.Recorder
			for range recv {
				r.Record(d.delayUs(float64(s.Rate)))
			}
			st.Latency = &latency.Latency{Histogram: r.H, Clock: latency.SameHost}
		}
		res.Flows = append(res.Flows, coordinator.Reconcile(coordinator.FlowInput{
			Sender: p.Sender, Receiver: p.Receiver, Streams: []coordinator.Stream{st},
			DurationSec: secs, FrameBytes: float64(s.FrameSize - 4), OfferedPPS: float64(s.Rate), AchievedPPS: achieved,
		}))
	}
	return res, nil
}

// isBurst tells a back-to-back trial's run from a rate trial's, both a
// count at a rate: a burst lasts less than 50 ms at its rate (the tests'
// bursts 10 ms at most, their trials 50 ms at least).
func isBurst(s coordinator.Spec) bool {
	return s.Count > 0 && float64(s.Count) < float64(s.Rate)*0.05
}

func parse(t *testing.T, y string) *Spec {
	t.Helper()
	s, err := Parse([]byte(y))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func runCampaign(t *testing.T, d *dut, y string, line func(float64) (float64, string)) (*results.Document, []Event) {
	t.Helper()
	var mu sync.Mutex
	var events []Event
	r := &Runner{Cluster: lab2x2, Run: d.run, Version: "test", LineRate: line,
		OnEvent: func(e Event) { mu.Lock(); events = append(events, e); mu.Unlock() }}
	doc, err := r.RunCampaign(context.Background(), parse(t, y), []byte(y))
	if err != nil {
		t.Fatal(err)
	}
	return doc, events
}

func TestCampaignRFC2544(t *testing.T) {
	// 60 % of the 1 Gb/s line rate for every size (r1 is the slowest link).
	limit := func(size int) float64 { return 0.6 * pktgen.LinePPS(1000, float64(size-4)) }
	d := &dut{limit: limit}
	doc, events := runCampaign(t, d, `name: q
agents: {senders: [s1, s2], receivers: [r1, r2]}
frame_sizes: [64, 1518]
trial_duration: 100ms
between_trials: {pause: 1ms}
search: {resolution: 0.5%}
`, nil)
	if doc.Status != coordinator.StatusOK || doc.Schema != results.Schema || doc.Kind != results.KindCampaign || len(doc.Summary) != 2 {
		t.Fatalf("doc %s %s %s, %d sizes: %s", doc.Status, doc.Schema, doc.Kind, len(doc.Summary), doc.Error)
	}
	// The summary sums the two flows; the searches and trials are per flow.
	for _, s := range doc.Summary {
		line := pktgen.LinePPS(1000, float64(s.Size-4))
		if math.Abs(s.ThroughputPPS-2*limit(s.Size)) > 2*0.005*line || s.LineRatePct < 59 || s.LineRatePct > 61 || s.Trials < 3 || s.Trials > 12 {
			t.Errorf("size %d: throughput %.0f (want %.0f ± %.0f), %.1f %% of line, %d trials", s.Size, s.ThroughputPPS, 2*limit(s.Size), 2*0.005*line, s.LineRatePct, s.Trials)
		}
		if want := s.ThroughputPPS * float64(s.Size+20) * 8; math.Abs(s.L1BPS-want) > 1 {
			t.Errorf("size %d: L1 %.0f, want %.0f", s.Size, s.L1BPS, want)
		}
		if pct := 100 * s.ThroughputPPS / results.LineRatePPS(doc.Hosts, doc.Trials[s.ThroughputTrial-1].Flows, float64(s.Size)); math.Abs(pct-s.LineRatePct) > 0.01 {
			t.Errorf("size %d: %.2f %% of line rate stored, the report's line rate makes it %.2f %%", s.Size, s.LineRatePct, pct)
		}
	}
	for _, s := range doc.Summary {
		tr := doc.Trials[s.ThroughputTrial-1]
		if tr.Size != s.Size || !tr.Passed || 2*tr.OfferedPPS != s.ThroughputPPS {
			t.Errorf("size %d: throughput trial %d is %+v", s.Size, s.ThroughputTrial, tr)
		}
	}
	if n := len(doc.Trials); n != doc.Summary[0].Trials+doc.Summary[1].Trials {
		t.Errorf("%d trials recorded, summary counts %d", n, doc.Summary[0].Trials+doc.Summary[1].Trials)
	}
	first := d.specs[0]
	if first.FrameSize != 64 || first.Rate != uint64(pktgen.LinePPS(1000, 60)+0.5) || first.Pattern != "pairwise" || len(first.Senders) != 2 {
		t.Errorf("first trial %+v", first)
	}
	if len(doc.Hosts) != 4 || doc.Hosts[0].Version != "test" || !strings.Contains(string(doc.Spec), `"frame_sizes":[64,1518]`) {
		t.Errorf("hosts %+v spec %s", doc.Hosts, doc.Spec)
	}
	var trials, sizes int
	for _, e := range events {
		switch e.Event {
		case "trial":
			trials++
		case "size":
			sizes++
		}
	}
	if trials != len(doc.Trials) || sizes != 2 || events[len(events)-1].Event != "campaign" {
		t.Errorf("events: %d trials %d sizes, last %+v", trials, sizes, events[len(events)-1])
	}
}

// A generator that cannot reach the rate is invalid, never loss — unless
// the spec says the path pushes back (a shaped link slowing a socket
// sender), where the shortfall fails the trial.
func TestCampaignShortfall(t *testing.T) {
	line := fixedLine(100000)
	spec := `agents: {senders: [s1], receivers: [r2]}
frame_sizes: [64]
trial_duration: 100ms
between_trials: {pause: 1ms}
search: {resolution: 1%}
`
	doc, _ := runCampaign(t, &dut{limit: func(int) float64 { return 1e9 }, gen: 70000}, spec, line)
	s := doc.Summary[0]
	if !s.GeneratorLimited || s.ThroughputPPS < 69000 || s.ThroughputPPS > 70000 {
		t.Errorf("generator-limited at 70 kpps: %+v", s)
	}
	for _, tr := range doc.Trials {
		if tr.GeneratorLimited && (tr.Valid || tr.Passed || tr.LossRatio != 0) {
			t.Errorf("generator-limited trial counted: %+v", tr)
		}
	}
	doc, _ = runCampaign(t, &dut{limit: func(int) float64 { return 52000 }, pushback: true}, spec+"shortfall: fail\n", line)
	s = doc.Summary[0]
	if s.GeneratorLimited || math.Abs(s.ThroughputPPS-52000) > 1000 {
		t.Errorf("pushback at 52 kpps: %+v", s)
	}
}

func TestCampaignSweepAndSelector(t *testing.T) {
	d := &dut{limit: func(int) float64 { return 150000 }}
	doc, _ := runCampaign(t, d, `agents: {select: {iface: data0}}
frame_sizes: [512]
rates: [50kpps, 100kpps, 200kpps]
trial_duration: 100ms
warmup: 50ms
between_trials: {pause: 1ms}
`, nil)
	// Each trial is its frames at its rate (RFC 2544's trial): the
	// warm-up's 50 ms at 50 kpps, then 100 ms at each rate.
	if len(d.specs) != 4 || d.specs[0].Count != 2500 || d.specs[0].Duration != 0 || d.specs[1].Count != 5000 || d.specs[3].Count != 20000 || d.specs[3].Rate != 200000 {
		t.Fatalf("%d runs (want warm-up + 3): %+v", len(d.specs), d.specs)
	}
	if got := strings.Join(d.specs[1].Senders, ",") + "→" + strings.Join(d.specs[1].Receivers, ","); got != "s1,s2→r1,r2" {
		t.Errorf("selected %s (the failed x1 must not be)", got)
	}
	s := doc.Summary[0]
	if s.ThroughputPPS != 2*100000 || s.Trials != 3 || doc.Trials[0].Phase != "warmup" || doc.Trials[0].Valid {
		t.Errorf("sweep: %+v, first trial %+v", s, doc.Trials[0])
	}
}

func TestCampaignNDRPDR(t *testing.T) {
	// No loss up to 40 kpps, 0.2 % loss up to 60 kpps, then all the excess.
	d := &dut{limit: func(int) float64 { return 60000 }}
	run := d.run
	knee := func(ctx context.Context, s coordinator.Spec) (*coordinator.Result, error) {
		res, err := run(ctx, s)
		for i := range res.Flows {
			f := &res.Flows[i]
			if s.Rate > 40000 && s.Rate <= 60000 {
				f.Lost = f.Sent / 500
				f.Received = f.Sent - f.Lost
			}
		}
		return res, err
	}
	r := &Runner{Cluster: lab2x2, Run: knee, LineRate: fixedLine(100000)}
	doc, err := r.RunCampaign(context.Background(), parse(t, `agents: {senders: [s1], receivers: [r2]}
frame_sizes: [64]
trial_duration: 200ms
between_trials: {pause: 1ms}
search: {type: ndr-pdr, initial_duration: 100ms, resolution: 1%}
`), nil)
	if err != nil {
		t.Fatal(err)
	}
	s := doc.Summary[0]
	if math.Abs(s.NDRPPS-40000) > 1000 || math.Abs(s.PDRPPS-60000) > 1000 || s.NDRPPS > s.PDRPPS || s.PDRGoal != 0.005 {
		t.Errorf("NDR %.0f (want 40k), PDR %.0f (want 60k), goal %v", s.NDRPPS, s.PDRPPS, s.PDRGoal)
	}
}

// The imix is one "size": the coordinator gets the mix, the line rate is
// that of the mean frame.
func TestCampaignIMIX(t *testing.T) {
	d := &dut{limit: func(int) float64 { return 1e9 }}
	doc, _ := runCampaign(t, d, `agents: {senders: [s1], receivers: [r2]}
frame_sizes: [imix]
backend: kernel
rates: [10%]
trial_duration: 100ms
between_trials: {pause: 1ms}
`, nil)
	s := doc.Summary[0]
	mean := (64*7 + 570*4 + 1518*1) / 12.0
	wantRate := 0.1 * pktgen.LinePPS(10000, mean-4)
	if s.Size != 0 || s.Label != "imix 64:7 570:4 1518:1" || math.Abs(s.ThroughputPPS-wantRate) > 1 {
		t.Errorf("imix summary %+v, want %.0f pps", s, wantRate)
	}
	if got := d.specs[0].IMIX; len(got) != 3 || got[1].Size != 570 || got[1].Weight != 4 {
		t.Errorf("coordinator spec imix %+v", got)
	}
}

// A link that several flows share is divided among them: 100 % of line
// rate in a fan-in is half the receiver's link per flow, and the summary
// sums the flows.
func TestCampaignSharedLinkLineRate(t *testing.T) {
	d := &dut{limit: func(int) float64 { return 1e9 }}
	doc, _ := runCampaign(t, d, `agents: {senders: [s1, s2], receivers: [r2]}
pattern: fan-in
frame_sizes: [64]
rates: [100%]
trial_duration: 100ms
`, nil)
	perFlow := pktgen.LinePPS(10000, 60) / 2
	if got := float64(d.specs[0].Rate); math.Abs(got-perFlow) > 1 {
		t.Errorf("offered %.0f pps per flow, want %.0f (r2's link shared by two flows)", got, perFlow)
	}
	if s := doc.Summary[0]; math.Abs(s.ThroughputPPS-2*perFlow) > 2 || math.Abs(s.LineRatePct-100) > 0.01 {
		t.Errorf("summary %+v: want %.0f pps = 100 %% of line rate", s, 2*perFlow)
	}
}

func TestCampaignSelectorRefusesBoth(t *testing.T) {
	r := &Runner{Cluster: members{
		{Name: "a", Tags: gossip.Tags{Role: "both", Iface: "data0"}, Status: "alive"},
		{Name: "s1", Tags: gossip.Tags{Role: "sender", Iface: "data0"}, Status: "alive"},
		{Name: "r1", Tags: gossip.Tags{Role: "receiver", Iface: "data0"}, Status: "alive"},
	}, Run: (&dut{}).run}
	y := "agents: {select: {iface: data0}}\nframe_sizes: [64]\nrates: [1000]\ntrial_duration: 100ms\n"
	_, err := r.RunCampaign(context.Background(), parse(t, y), []byte(y))
	if err == nil || !strings.Contains(err.Error(), "agent a has role both") {
		t.Fatalf("a selected agent of role both: %v; want it named", err)
	}
}

// TestCampaignPartialTrialIsNoLoss checks that a trial whose run is
// partial (a receiver could not count every packet: uncounted, never
// loss) is not read by the search as a lossy trial: it is retried, and
// its record stays invalid.
func TestCampaignPartialTrialIsNoLoss(t *testing.T) {
	limit := func(size int) float64 { return 0.6 * pktgen.LinePPS(1000, float64(size-4)) }
	d := &dut{limit: limit}
	var calls int
	run := func(ctx context.Context, s coordinator.Spec) (*coordinator.Result, error) {
		res, err := d.run(ctx, s)
		calls++
		if calls == 1 { // the first trial: every packet arrived, some uncounted
			res.Status = coordinator.StatusPartial
			res.Warnings = []string{"r1: uncounted: 10 test packets beyond its table"}
			for i := range res.Flows {
				res.Flows[i].Uncounted, res.Flows[i].Lost = 10, 10
			}
		}
		return res, err
	}
	y := "name: p\nagents: {senders: [s1], receivers: [r1]}\nframe_sizes: [64]\ntrial_duration: 100ms\nbetween_trials: {pause: 1ms}\nsearch: {resolution: 0.5%}\n"
	r := &Runner{Cluster: lab2x2, Run: run, Version: "test"}
	doc, err := r.RunCampaign(context.Background(), parse(t, y), []byte(y))
	if err != nil {
		t.Fatal(err)
	}
	first := doc.Trials[0]
	if first.Valid || first.Passed || !strings.Contains(first.Error, "run partial: r1: uncounted") {
		t.Errorf("partial trial recorded as %+v: want invalid, not passed, saying why", first)
	}
	if len(doc.Trials) < 2 || doc.Trials[1].OfferedPPS != first.OfferedPPS {
		t.Fatalf("the partial trial at %.0f pps was not run again: trials %+v", first.OfferedPPS, doc.Trials)
	}
	line := pktgen.LinePPS(1000, 60)
	if s := doc.Summary[0]; math.Abs(s.ThroughputPPS-limit(64)) > 0.005*line {
		t.Errorf("throughput %.0f, want %.0f: the partial trial counted as loss", s.ThroughputPPS, limit(64))
	}
}

// fixedLine is a Runner.LineRate of pps per flow for every frame size.
func fixedLine(pps float64) func(float64) (float64, string) {
	return func(float64) (float64, string) { return pps, "a test's fixed line rate" }
}

// RFC 2544's latency test (26.2): after each size's throughput search,
// the spec's trials of its trial duration at the throughput rate, each
// timing every packet; the size's latency is all of their delays, and
// the throughput stays the search's.
func TestCampaignLatencyTest(t *testing.T) {
	limit := func(size int) float64 { return 0.6 * pktgen.LinePPS(1000, float64(size-4)) }
	// The device queues more the nearer it runs to its limit.
	d := &dut{limit: limit, delayUs: func(rate float64) int64 { return 40 + int64(rate/1e4) }}
	doc, _ := runCampaign(t, d, `name: q
agents: {senders: [s1], receivers: [r1]}
frame_sizes: [64, 1518]
trial_duration: 100ms
between_trials: {pause: 1ms}
search: {resolution: 1%}
latency: {trials: 3, trial_duration: 200ms}
`, nil)
	if doc.Status != coordinator.StatusOK || len(doc.Summary) != 2 {
		t.Fatalf("doc %s: %s", doc.Status, doc.Error)
	}
	for _, s := range doc.Summary {
		var lat []results.Trial
		for _, tr := range doc.Trials {
			if tr.Size == s.Size && tr.Phase == PhaseLatency {
				lat = append(lat, tr)
			}
		}
		var received uint64
		for _, tr := range lat {
			received += tr.Received
			if tr.OfferedPPS != s.ThroughputPPS || tr.DurationSec != 0.2 || !tr.Valid {
				t.Errorf("size %d: latency trial %+v, want %.0f pps for 200ms", s.Size, tr, s.ThroughputPPS)
			}
		}
		want := 40 + int64(s.ThroughputPPS/1e4)
		if len(lat) != 3 || s.LatencyTrials != 3 || s.Latency == nil || s.Latency.Samples() != received || int64(s.Latency.MinUs) != want || int64(s.Latency.MaxUs) != want {
			t.Errorf("size %d: %d latency trials, latency %+v over %d received, want every delay %d µs", s.Size, len(lat), s.Latency, received, want)
		}
		if tr := doc.Trials[s.ThroughputTrial-1]; tr.Phase == PhaseLatency {
			t.Errorf("size %d: the throughput trial is a latency trial", s.Size)
		}
	}
}
