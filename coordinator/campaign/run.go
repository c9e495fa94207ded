package campaign

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"
	"gopkg.in/yaml.v3"

	"github.com/linerate/linerate/coordinator"
	"github.com/linerate/linerate/coordinator/results"
	"github.com/linerate/linerate/coordinator/search"
	"github.com/linerate/linerate/internal/cluster/gossip"
	"github.com/linerate/linerate/internal/ctxsleep"
	"github.com/linerate/linerate/latency"
	"github.com/linerate/linerate/pktgen"
)

// Runner runs campaigns: every trial is one coordinator run.
type Runner struct {
	// Cluster lists the agents (names, roles, tags, link speeds).
	Cluster interface{ Members() []coordinator.Member }
	// Run performs one trial (coordinator.Runner.Run).
	Run func(ctx context.Context, spec coordinator.Spec) (*coordinator.Result, error)
	Log hclog.Logger
	// OnEvent, when set, receives progress: trials, searches, sizes.
	OnEvent func(Event)
	// Version is the tool's version for the record.
	Version string
	// LineRate, when set, replaces the line rate per flow that rates in
	// % and the search bounds refer to, for frames of frameBytes (with
	// FCS; a mix's mean), and says what sets it: the lab sets it to a
	// shaped port's rate. Default: results.LinkLineRate over the agents'
	// links and the pattern's flows (a link that several flows share is
	// divided among them), per flow. The document keeps it per size
	// (SizeResult.LinePPS, LineBasis) and per trial (Trial.LinePPS), and
	// every report of the campaign uses that one.
	LineRate func(frameBytes float64) (perFlowPPS float64, basis string)
	// Save, when set, stores the document (results.Store.Save): when the
	// campaign starts, after every trial and at its end, so that a
	// campaign killed midway keeps every trial it finished. A save that
	// fails stops the campaign (ErrStore).
	Save func(*results.Document) error
	// Writer is the process running the campaign, recorded in the
	// document while it runs (results.LocalProcesses{}.Self()): a running
	// document whose writer is gone was interrupted.
	Writer *results.Writer
}

// EventName names a campaign's progress report (its "event" key).
type EventName string

// A campaign reports each trial, each frame size done, and its end.
const (
	EventTrial    EventName = "trial"
	EventSize     EventName = "size"
	EventCampaign EventName = "campaign"
)

// Event is one progress report (`--json-stream`).
type Event struct {
	Event      EventName `json:"event"`
	Time       time.Time `json:"time"`
	Size       int       `json:"size,omitempty"`
	Phase      string    `json:"phase,omitempty"`
	N          int       `json:"n,omitempty"`
	OfferedPPS float64   `json:"offered_pps,omitempty"` // per flow, as BestPPS
	Burst      uint64    `json:"burst,omitempty"`       // a back-to-back burst's frames per flow
	LossRatio  float64   `json:"loss_ratio"`
	Passed     bool      `json:"passed"`
	Valid      bool      `json:"valid"`
	BestPPS    float64   `json:"best_pps"`
	SizesDone  int       `json:"sizes_done"`
	SizesTotal int       `json:"sizes_total"`
	Message    string    `json:"message,omitempty"`
}

// campaignRun is one campaign in progress.
type campaignRun struct {
	r         *Runner
	spec      *Spec
	doc       *results.Document
	senders   []string
	receivers []string
	links     []results.Fingerprint // name, role and link speed of each agent
	flows     []coordinator.Flow    // the pattern's sender → receiver pairs
	hosts     []coordinator.Host
	lab       *coordinator.PathTruth
	log       hclog.Logger
	sizesDone int
	best      float64
	line      float64 // the current size's line rate per flow (lineRate)
	// replay are the stored trials a resumed campaign answers from
	// before it runs new ones (resume.go).
	replay  []results.Trial
	unsaved bool // resumed, and not saved as running yet
}

// RunCampaign performs the campaign and returns its document (also when it ended
// early: Status says so). raw is the spec as given, kept in the record.
// The error is a spec the cluster cannot run (no document then), or a
// save that failed (ErrStore; the document is returned with it when the
// campaign ran).
func (r *Runner) RunCampaign(ctx context.Context, spec *Spec, raw []byte) (*results.Document, error) {
	log := r.Log
	if log == nil {
		log = hclog.NewNullLogger()
	}
	now := time.Now().UTC()
	c := &campaignRun{r: r, spec: spec, log: log, doc: &results.Document{
		Schema: results.Schema, ID: results.NewID(now), Kind: results.KindCampaign, Name: spec.Name, Created: now, Tool: r.Version,
		Summary: []results.SizeResult{}, Trials: []results.Trial{}, Hosts: []results.Fingerprint{},
	}}
	if js, err := specJSON(raw); err == nil {
		c.doc.Spec = js
	}
	if err := c.resolve(); err != nil {
		return nil, err
	}
	return c.execute(ctx, nil)
}

// specJSON keeps the spec as given, as JSON.
func specJSON(raw []byte) (json.RawMessage, error) {
	var v any
	if err := yaml.Unmarshal(raw, &v); err != nil {
		return nil, err
	}
	return json.Marshal(v)
}

// resolve finds the senders and receivers (names or selector) among the
// cluster's alive members and the slowest link among them.
func (c *campaignRun) resolve() error {
	ms := c.r.Cluster.Members()
	byName := map[string]coordinator.Member{}
	for _, m := range ms {
		byName[m.Name] = m
	}
	a := c.spec.Agents
	if len(a.Select) > 0 {
		for _, m := range ms {
			if m.Status != "alive" || !matches(m, a.Select) {
				continue
			}
			switch m.Role {
			case gossip.RoleSender:
				c.senders = append(c.senders, m.Name)
			case gossip.RoleReceiver:
				c.receivers = append(c.receivers, m.Name)
			default: // "both": which end it is here, only its name can say
				return fmt.Errorf("campaign: agents.select %v: agent %s has role %s: list it by name under senders or receivers", a.Select, m.Name, m.Role)
			}
		}
		sort.Strings(c.senders)
		sort.Strings(c.receivers)
		if len(c.senders) == 0 || len(c.receivers) == 0 {
			return fmt.Errorf("campaign: agents.select %v: %d senders and %d receivers alive: want at least one of each", a.Select, len(c.senders), len(c.receivers))
		}
	} else {
		c.senders, c.receivers = a.Senders, a.Receivers
	}
	pairs, err := coordinator.Pairs(c.spec.Pattern, c.senders, c.receivers)
	if err != nil {
		return fmt.Errorf("campaign: %w", err)
	}
	for _, p := range pairs {
		c.flows = append(c.flows, coordinator.Flow{Sender: p.Sender, Receiver: p.Receiver})
	}
	for i, n := range append(append([]string{}, c.senders...), c.receivers...) {
		m, ok := byName[n]
		if !ok {
			return fmt.Errorf("campaign: agent %s is not a member of the cluster", n)
		}
		role := "receiver"
		if i < len(c.senders) {
			role = "sender"
		}
		c.links = append(c.links, results.Fingerprint{Name: n, Role: role, LinkSpeedMbps: m.SpeedMbps})
	}
	return nil
}

// matches tells whether m carries every tag of sel (role, iface, numa,
// backend, … as serf announces them, gossip.Tags.Selectable), or its
// name under the key "name".
func matches(m coordinator.Member, sel map[string]string) bool {
	tags := m.Tags.Selectable()
	tags["name"] = m.Name
	for k, v := range sel {
		if tags[k] != v {
			return false
		}
	}
	return true
}

// frame is the (mean) frame size without FCS of a size; 0 is the imix.
func (c *campaignRun) frame(size int) float64 {
	s := coordinator.Spec{FrameSize: size, IMIX: c.imix(size)}
	return s.MeanFrame()
}

// imix is the spec's mix for size 0 (nil otherwise).
func (c *campaignRun) imix(size int) pktgen.IMIX {
	if size > 0 {
		return nil
	}
	return slices.Clone(c.spec.IMIX) // each run's own copy, as its result keeps it
}

// label names a size in messages and the summary ("64 B", "imix 64:7 570:4 1518:1").
func (c *campaignRun) label(size int) string {
	if size > 0 {
		return fmt.Sprintf("%d-byte", size)
	}
	parts := []string{"imix"}
	for _, e := range c.spec.IMIX {
		parts = append(parts, fmt.Sprintf("%d:%d", e.Size, e.Weight))
	}
	return strings.Join(parts, " ")
}

// lineRate is the line rate per flow for a frame size (incl. FCS; 0 is
// the imix) and what sets it.
func (c *campaignRun) lineRate(size int) (perFlow float64, basis string, err error) {
	frame := c.frame(size) + pktgen.FCSBytes
	if c.r.LineRate != nil {
		perFlow, basis = c.r.LineRate(frame)
		return perFlow, basis, nil
	}
	total, basis := results.LinkLineRate(c.links, c.flows, frame)
	if total <= 0 {
		return 0, "", fmt.Errorf("campaign: no agent announces its link speed: give rates and search bounds in packets per second, not %%")
	}
	return total / float64(len(c.flows)), basis, nil
}

func (c *campaignRun) emit(e Event) {
	e.Time = time.Now().UTC()
	e.SizesDone, e.SizesTotal = c.sizesDone, len(c.spec.Sizes)
	if c.r.OnEvent != nil {
		c.r.OnEvent(e)
	}
}

func (c *campaignRun) run(ctx context.Context) error {
	for _, sz := range c.spec.Sizes {
		size := sz.Bytes // 0: the imix
		line, basis, err := c.lineRate(size)
		if err != nil {
			return err
		}
		c.line = line
		var best *results.SizeResult
		for rep := range c.spec.Repetitions {
			c.best = 0
			res, err := c.size(ctx, size, line, basis, rep)
			if err != nil {
				return err
			}
			if best == nil || res.ThroughputPPS < best.ThroughputPPS {
				best = res
			}
		}
		if err := c.latencyTest(ctx, size, best); err != nil {
			return err
		}
		if err := c.backToBack(ctx, size, best); err != nil {
			return err
		}
		c.doc.Summary = append(c.doc.Summary, *best)
		c.sizesDone++
		c.emit(Event{Event: EventSize, Size: size, BestPPS: best.ThroughputPPS / float64(len(c.flows)), Message: best.Note})
	}
	return nil
}

// latencyTest runs RFC 2544's latency test of one size at its
// throughput rate (res.ThroughputPPS, summed over the flows) when the
// spec asks for it, and records every delay of its trials in res. A size
// without a throughput (nothing passed) has no latency to measure.
func (c *campaignRun) latencyTest(ctx context.Context, size int, res *results.SizeResult) error {
	lt := c.spec.Latency
	if lt == nil || res.ThroughputPPS <= 0 {
		return nil
	}
	rate := res.ThroughputPPS / float64(len(c.flows))
	var ls []*latency.Latency
	for range lt.Trials {
		t, err := c.trial(ctx, size, rate, time.Duration(lt.Duration), PhaseLatency, true)
		if err != nil {
			return err
		}
		ls = append(ls, t.Latency())
	}
	res.Latency, res.LatencyTrials = latency.Merge(ls...), lt.Trials
	if res.Latency == nil {
		res.Note = strings.TrimSpace(res.Note + " latency test: no trial timed its packets (receivers with latency off)")
	}
	return nil
}

// PhaseLatency is the phase of RFC 2544's latency trials.
const PhaseLatency = "latency"

// size searches (or sweeps) one frame size once.
func (c *campaignRun) size(ctx context.Context, size int, line float64, basis string, rep int) (*results.SizeResult, error) {
	s := c.spec
	first := s.Search.Max.PerFlow(line)
	if s.Search.Type == search.TypeNone {
		first = s.Rates[0].PerFlow(line)
	}
	if s.Warmup > 0 {
		if _, err := c.trial(ctx, size, first, time.Duration(s.Warmup), "warmup", false); err != nil {
			return nil, err
		}
	}
	n0 := len(c.doc.Trials)
	res := &results.SizeResult{Size: size}
	if size == 0 {
		res.Label = c.label(size)
	}
	switch s.Search.Type {
	case search.TypeNone:
		for _, rt := range s.Rates {
			t, err := c.trial(ctx, size, rt.PerFlow(line), time.Duration(s.Duration), "sweep", true)
			if err != nil {
				return nil, err
			}
			if t.Passed && t.OfferedPPS > res.ThroughputPPS {
				res.ThroughputPPS, res.LossRatio, res.ThroughputTrial = t.OfferedPPS, t.LossRatio, t.N
			}
		}
	default:
		if err := c.search(ctx, size, line, res); err != nil {
			return nil, err
		}
	}
	res.Trials = len(c.doc.Trials) - n0
	if line > 0 {
		res.LineRatePct = 100 * res.ThroughputPPS / line
	}
	// The searches and sweeps work per flow; the record sums the flows.
	n := float64(len(c.flows))
	res.ThroughputPPS, res.NDRPPS, res.PDRPPS = n*res.ThroughputPPS, n*res.NDRPPS, n*res.PDRPPS
	res.LinePPS, res.LineBasis = n*line, basis
	res.L1BPS = pktgen.L1Bits(res.ThroughputPPS, c.frame(size))
	if rep > 0 {
		res.Note = strings.TrimSpace(res.Note + fmt.Sprintf(" repetition %d of %d", rep+1, s.Repetitions))
	}
	return res, nil
}

// trial runs once at rate (per flow) for d and records it.
func (c *campaignRun) trial(ctx context.Context, size int, rate float64, d time.Duration, phase string, counted bool) (*results.Trial, error) {
	return c.runTrial(ctx, size, rate, d, 0, phase, counted)
}

// runTrial runs once at rate (per flow), the frames of d at rate
// (trialFrames) or, when burst is not 0, burst frames per flow (d is then
// their time at rate), and records it.
func (c *campaignRun) runTrial(ctx context.Context, size int, rate float64, d time.Duration, burst uint64, phase string, counted bool) (*results.Trial, error) {
	if t, ok, err := c.replayed(size, rate, d, burst, phase); ok || err != nil {
		return t, err
	}
	if err := c.startTrial(); err != nil {
		return nil, err
	}
	if n := len(c.doc.Trials); n > 0 && c.spec.Between.Pause > 0 {
		if err := ctxsleep.Sleep(ctx, time.Duration(c.spec.Between.Pause)); err != nil {
			return nil, err
		}
	}
	s := c.spec
	if !(rate >= 0.5) { // 0 pps (or NaN) would be unpaced: as fast as the senders go
		return nil, fmt.Errorf("campaign: trial at %.3g pps, %s frames: below 1 pps per flow", rate, c.label(size))
	}
	run := coordinator.Spec{
		// An imix's FrameSize (size 0) is the family's smallest, the run's default.
		Senders: c.senders, Receivers: c.receivers, Pattern: s.Pattern, FrameSize: size, IMIX: c.imix(size), Duration: d,
		Rate: uint64(rate + 0.5), Threads: s.Threads, Backend: s.Backend, NeedWakeup: s.NeedWakeup, Method: s.Method, Drain: time.Duration(s.Drain),
		Latency: s.LatencyMode, RTTRate: s.RTTRate, Preflight: s.Preflight, IPv6: s.IPv6, VLAN: s.VLAN,
	}
	s.Pktgen.into(&run)
	run.Duration, run.Count = 0, trialFrames(rate, d, run.Burst, s.Threads)
	if burst > 0 {
		run.Count = burst
	}
	res, err := c.r.Run(ctx, run)
	if err == nil && ctx.Err() != nil {
		// Cut short by the interruption: not a measurement; a resume
		// runs it again.
		err = ctx.Err()
	}
	if err != nil {
		return nil, fmt.Errorf("campaign: trial at %.0f pps, %s frames: %w", rate, c.label(size), err)
	}
	t := results.Trial{N: len(c.doc.Trials) + 1, Size: size, Search: string(s.Search.Type), Phase: phase, OfferedPPS: rate, Burst: burst,
		LinePPS: c.line, DurationSec: d.Seconds(), RunID: res.RunID, Error: res.Error}
	t.Tally(append([]coordinator.Flow(nil), res.Flows...))
	if c.line > 0 {
		// The flows' % of line rate is of the campaign's line rate (a
		// shaper's, say), not of each host's own link.
		for i := range t.Flows {
			t.Flows[i].LineRatePct = 100 * t.Flows[i].PPS / c.line
		}
	}
	if res.Status != coordinator.StatusOK && t.Error == "" {
		// A partial run (a receiver could not count every packet) says
		// why in its warnings; the trial is no measurement, and the
		// search must see it as one that failed, not as loss.
		t.Error = fmt.Sprintf("run %s: %s", res.Status, strings.Join(res.Warnings, "; "))
	}
	t.Valid = res.Status == coordinator.StatusOK && (!t.GeneratorLimited || s.Shortfall == ShortfallFail)
	t.Passed = t.Valid && t.LossRatio <= s.Search.LossGoal && !t.GeneratorLimited
	if burst > 0 {
		// A burst is back to back or not at all: it passes when every
		// frame asked for was sent and received; a sender that fell short
		// of the rate is said in the test's result, not taken as loss.
		t.Valid = res.Status == coordinator.StatusOK
		t.Passed = t.Valid && t.Lost == 0 && t.Received == t.Sent && t.Sent == burst*uint64(len(c.flows))
	}
	if !counted {
		t.Valid, t.Passed = false, false
	}
	c.doc.Trials = append(c.doc.Trials, t)
	if len(res.Hosts) > 0 {
		c.hosts = res.Hosts
	}
	if res.Lab != nil {
		c.lab = res.Lab
	}
	if t.Passed && rate > c.best && burst == 0 {
		c.best = rate
	}
	c.emit(Event{Event: EventTrial, Size: size, Phase: phase, N: t.N, OfferedPPS: rate, Burst: burst, LossRatio: t.LossRatio, Passed: t.Passed, Valid: t.Valid, BestPPS: c.best, Message: t.Error})
	c.log.Info("trial", "n", t.N, "size", size, "phase", phase, "offered_pps", int64(rate), "loss_ratio", t.LossRatio, "passed", t.Passed, "valid", t.Valid)
	if err := c.save(); err != nil {
		return nil, fmt.Errorf("campaign: after trial %d: %w", t.N, err)
	}
	return &t, nil
}

// finish sets the document's end: ok, interrupted (ctx was cancelled:
// Ctrl-C, SIGTERM), or failed (partial when some size was done).
func (c *campaignRun) finish(ctx context.Context, err error) {
	d := c.doc
	d.Finished = time.Now().UTC()
	switch {
	case err == nil:
		d.Status, d.Error = coordinator.StatusOK, ""
	case ctx.Err() != nil:
		d.Status = results.StatusInterrupted
		d.Error = fmt.Sprintf("stopped after %d trials (%v); continue it with: linerate campaign resume %s", len(d.Trials), err, d.ID)
	default:
		d.Status, d.Error = coordinator.StatusFailed, err.Error()
		if len(d.Summary) > 0 {
			d.Status = coordinator.StatusPartial
		}
	}
	c.emit(Event{Event: EventCampaign, Message: d.Status})
}

// search runs the spec's throughput search for one size: every trial
// is a real run through trial; the search decides the rates.
func (c *campaignRun) search(ctx context.Context, size int, line float64, res *results.SizeResult) error {
	sr := c.spec.Search
	opts := search.Options{
		MaxPPS: sr.Max.PerFlow(line), MinPPS: sr.Min.PerFlow(line), Resolution: sr.Resolution.PerFlow(line),
		Duration: time.Duration(c.spec.Duration), MaxTrials: sr.MaxTrials,
	}
	if sr.Type == search.TypeNDRPDR {
		opts.Goals, opts.InitialDuration = sr.Goals, time.Duration(sr.Initial)
	} else {
		opts.LossGoal = sr.LossGoal
	}
	n0 := len(c.doc.Trials)
	fn := func(ctx context.Context, rate float64, d time.Duration, phase string) (search.Outcome, error) {
		t, err := c.trial(ctx, size, rate, d, phase, true)
		if err != nil {
			return search.Outcome{}, err
		}
		o := search.Outcome{OfferedPPS: rate, AchievedPPS: t.AchievedPPS, Sent: t.Sent, Received: t.Received, Lost: t.Lost,
			LossRatio: t.LossRatio, GeneratorLimited: t.GeneratorLimited}
		if t.Error != "" {
			o.Err = errors.New(t.Error)
		}
		if c.spec.Shortfall == ShortfallFail && t.GeneratorLimited {
			// The path pushed back: what could not be offered counts
			// against the device like loss.
			o.GeneratorLimited = false
			if rate > 0 {
				o.LossRatio = max(o.LossRatio, 1-t.AchievedPPS/rate)
			}
		}
		return o, nil
	}
	var r *search.Result
	var err error
	if sr.Type == search.TypeNDRPDR {
		r, err = search.NDRPDR(ctx, opts, fn)
	} else {
		r, err = search.RFC2544(ctx, opts, fn)
	}
	if r != nil {
		// The search's verdicts are the record's.
		for i, st := range r.Trials {
			if k := n0 + i; k < len(c.doc.Trials) {
				c.doc.Trials[k].Valid, c.doc.Trials[k].Passed = st.Valid, st.Passed
			}
		}
		lo := r.Goals[0]
		res.ThroughputPPS, res.LossRatio, res.GeneratorLimited, res.Note = lo.RatePPS, lo.LossRatio, r.GeneratorLimited, strings.TrimSpace(r.Note+" "+lo.Note)
		if lo.Found && lo.Trial > 0 {
			res.ThroughputTrial = n0 + lo.Trial // the search numbers its own trials from 1
		}
		if sr.Type == search.TypeNDRPDR {
			hi := r.Goals[len(r.Goals)-1]
			res.NDRPPS, res.PDRPPS, res.PDRGoal = lo.RatePPS, hi.RatePPS, hi.Goal
		}
	}
	if err != nil {
		return fmt.Errorf("campaign: %s frames: %s search: %w", c.label(size), sr.Type, err)
	}
	return nil
}
