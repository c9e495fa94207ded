package campaign

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/linerate/linerate/coordinator"
	"github.com/linerate/linerate/coordinator/search"
	"github.com/linerate/linerate/latency"
	"github.com/linerate/linerate/pktgen"
	"github.com/linerate/linerate/receiver"
)

// Spec is a campaign as written in YAML.
type Spec struct {
	Name    string              `yaml:"name"`
	Agents  Agents              `yaml:"agents"`
	Pattern coordinator.Pattern `yaml:"pattern"`
	Sizes   []Size              `yaml:"frame_sizes"`
	IMIX    pktgen.IMIX         `yaml:"imix"`
	Threads int                 `yaml:"threads"`
	// Rates are offered rates per flow for a sweep (search: none).
	Rates    []Rate   `yaml:"rates"`
	Search   Search   `yaml:"search"`
	Duration Duration `yaml:"trial_duration"`
	// Repetitions repeat each size's search (or sweep); the summary keeps
	// the lowest throughput, the conservative answer.
	Repetitions int                `yaml:"repetitions"`
	Warmup      Duration           `yaml:"warmup"`
	Drain       Duration           `yaml:"drain"`
	Between     Between            `yaml:"between_trials"`
	Backend     pktgen.BackendName `yaml:"backend"`
	Method      receiver.Method    `yaml:"method"`
	// NeedWakeup is the AF_XDP sockets' need_wakeup policy, the afxdp
	// backend's and the afxdp method's (pktgen.NeedWakeups; default
	// auto); on and off need backend or method afxdp.
	NeedWakeup pktgen.NeedWakeup `yaml:"need_wakeup"`
	// Shortfall says what a trial whose senders did not reach the offered
	// rate is: ShortfallInvalid (default) or ShortfallFail.
	Shortfall Shortfall `yaml:"shortfall"`
	// Latency, when given, is RFC 2544's latency test (26.2) of every
	// size, after its throughput search: Trials trials of Duration at the
	// throughput rate.
	Latency *LatencyTest `yaml:"latency"`
	// BackToBack, when given, is RFC 2544's back-to-back frames test
	// (26.4) of every size, after its throughput search (and latency
	// test).
	BackToBack *BackToBackTest `yaml:"back_to_back"`
	// LatencyMode is what every trial times (coordinator.LatencyMode:
	// oneway, the default; rtt, round trips too, of a latency stream of
	// RTTRate packets a second per flow; off), RTTRate 0 its default.
	LatencyMode coordinator.LatencyMode `yaml:"latency_mode"`
	RTTRate     uint64                  `yaml:"rtt_rate"`
	// Preflight is what every trial does with its hosts' checks
	// (coordinator.Preflight: warn, the default; strict; fix).
	Preflight coordinator.Preflight `yaml:"preflight"`
	// Pktgen is kernel pktgen's surface every trial sends with (pktgen.go).
	Pktgen Pktgen `yaml:"pktgen"`
	// IPv6 sends every trial to the receivers' IPv6 data addresses
	// (coordinator.Spec.IPv6); VLAN tags every frame with this 802.1Q id
	// (1-4094; 0: untagged). Both raise the smallest frame size, which
	// counts the tag (coordinator.Spec.MinFrameSize).
	IPv6 bool `yaml:"ipv6"`
	VLAN int  `yaml:"vlan"`

	lines map[string]int // field path → line in the YAML, for errors
}

// LatencyTest is RFC 2544's latency test (section 26.2): at each frame
// size's throughput rate, Trials trials (the RFC asks for at least 20,
// the default) of Duration each (at least 120 s in the RFC, the
// default); each trial times every packet, and the size's latency is
// all of their delays together.
type LatencyTest struct {
	Trials   int      `yaml:"trials"`
	Duration Duration `yaml:"trial_duration"`
}

// RFC 2544's latency test defaults (section 26.2).
const (
	DefaultLatencyTrials   = 20
	DefaultLatencyDuration = Duration(120 * time.Second)
)

// BackToBackTest is RFC 2544's back-to-back frames test (section 26.4):
// the longest burst at the medium's maximum rate that the path carries
// with no loss, searched by burst length, Trials times (the RFC asks for
// at least 50, the default), the mean reported. A burst is Rate per
// flow (100 % of the line rate, the medium's maximum, by default) for a
// count of frames; the search goes from the spec's threads (at least 1:
// each sender thread sends at least one frame) up to the frames of
// Duration at Rate (the RFC's trial length, at least 2 s, the default),
// to within Resolution frames (1, exact, by default).
type BackToBackTest struct {
	Trials     int      `yaml:"trials"`
	Duration   Duration `yaml:"trial_duration"`
	Rate       Rate     `yaml:"rate"`
	Resolution uint64   `yaml:"resolution"`
}

// RFC 2544's back-to-back defaults (section 26.4) and the limits of a
// spec's back_to_back section.
const (
	DefaultBackToBackTrials   = 50
	DefaultBackToBackDuration = Duration(2 * time.Second)
	MaxBackToBackDuration     = Duration(time.Minute) // pktgen counts at most 9,999,999,999 frames a thread
	MaxBackToBackResolution   = 1_000_000_000
)

// Agents are the run's senders and receivers, by name or by tag selector.
type Agents struct {
	Senders   []string          `yaml:"senders"`
	Receivers []string          `yaml:"receivers"`
	Select    map[string]string `yaml:"select"` // tag=value every selected agent carries (role decides sender/receiver)
}

// Size is a frame size including FCS, or the imix.
type Size struct {
	Bytes int  // pktgen.MinFrameSize … MaxFrameSize
	IMIX  bool // the spec's imix
}

// DefaultIMIX is the common 7:4:1 of 64, 570 and 1518-byte frames.
var DefaultIMIX = pktgen.IMIX{{Size: 64, Weight: 7}, {Size: 570, Weight: 4}, {Size: 1518, Weight: 1}}

// Rate is an offered rate per flow: packets per second, or a percentage
// of a flow's line rate for the frame size (results.LineRatePPS over the
// agents' links and the pattern's flows, per flow).
type Rate struct {
	PPS     float64
	Percent float64
}

// PerFlow is r in packets per second for a line rate of linePPS.
func (r Rate) PerFlow(linePPS float64) float64 {
	if r.Percent > 0 {
		return r.Percent / 100 * linePPS
	}
	return r.PPS
}

func (r Rate) String() string {
	if r.Percent != 0 {
		return rateNumber(r.Percent) + "%"
	}
	if math.IsNaN(r.PPS) || math.IsInf(r.PPS, 0) {
		return rateNumber(r.PPS)
	}
	return rateNumber(r.PPS) + "pps"
}

// rateNumber is v as a rate's number is written: 1500000, 0.5, inf, nan.
func rateNumber(v float64) string {
	switch {
	case math.IsNaN(v):
		return "nan"
	case math.IsInf(v, 0):
		return strings.TrimPrefix(strings.ToLower(strconv.FormatFloat(v, 'f', -1, 64)), "+")
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// Search is the throughput search of every frame size.
type Search struct {
	Type       search.Type `yaml:"type"`             // search.TypeRFC2544 (default), TypeNDRPDR, TypeNone (sweep the rates)
	LossGoal   float64     `yaml:"loss_goal"`        // rfc2544: the highest loss ratio that passes (default 0)
	Goals      []float64   `yaml:"goals"`            // ndr-pdr: loss ratio goals (default: search.NDRGoal and PDRGoal)
	Resolution Rate        `yaml:"resolution"`       // stop when the bounds are this close (default 1%)
	Min        Rate        `yaml:"min_rate"`         // default 1%
	Max        Rate        `yaml:"max_rate"`         // default 100%
	Initial    Duration    `yaml:"initial_duration"` // ndr-pdr: short trials (default search.DefaultInitialDuration)
	MaxTrials  int         `yaml:"max_trials"`       // default: the search's own budget
}

// Between is what happens between trials.
type Between struct {
	Pause Duration `yaml:"pause"` // idle time (default 1s): queues drain, counters settle
}

// Duration is a YAML duration ("10s", "1m30s").
type Duration time.Duration

// Parse reads and validates a spec. Errors name the line and the field.
func Parse(data []byte) (*Spec, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, fmt.Errorf("campaign spec: %w", err)
	}
	if len(root.Content) == 0 {
		return nil, fmt.Errorf("campaign spec: empty")
	}
	s := &Spec{lines: map[string]int{}}
	index(root.Content[0], "", s.lines)
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(s); err != nil {
		return nil, fmt.Errorf("campaign spec: %w", cleanYAMLError(err))
	}
	if err := s.validate(); err != nil {
		return nil, err
	}
	return s, nil
}

// index records the line of every mapping key and sequence item by path
// ("search.resolution", "frame_sizes[2]").
func index(n *yaml.Node, path string, lines map[string]int) {
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			p := n.Content[i].Value
			if path != "" {
				p = path + "." + p
			}
			lines[p] = n.Content[i].Line
			index(n.Content[i+1], p, lines)
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			p := fmt.Sprintf("%s[%d]", path, i)
			lines[p] = c.Line
			index(c, p, lines)
		}
	}
}

func cleanYAMLError(err error) error {
	var te *yaml.TypeError
	if errors.As(err, &te) {
		var msgs []string
		for _, e := range te.Errors {
			msgs = append(msgs, strings.Replace(e, "in type campaign.Spec", "", 1))
		}
		return errors.New(strings.Join(msgs, "; "))
	}
	return err
}

// errf is a validation error at a field, with its line when known.
func (s *Spec) errf(field, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if l, ok := s.lines[field]; ok {
		return fmt.Errorf("campaign spec: line %d: %s: %s", l, field, msg)
	}
	return fmt.Errorf("campaign spec: %s: %s", field, msg)
}

func (s *Spec) validate() error {
	if s.Pattern == "" {
		s.Pattern = coordinator.Pairwise
	}
	if err := s.Pattern.Check(); err != nil {
		return s.errf("pattern", "%v", err)
	}
	a := s.Agents
	if len(a.Select) == 0 && (len(a.Senders) == 0 || len(a.Receivers) == 0) {
		return s.errf("agents", "name senders and receivers, or give a tag selector (select: {tag: value})")
	}
	if len(a.Select) > 0 && (len(a.Senders) > 0 || len(a.Receivers) > 0) {
		return s.errf("agents.select", "a selector or names, not both")
	}
	if len(s.Sizes) == 0 {
		return s.errf("frame_sizes", "missing: give frame sizes including FCS (e.g. [64, 512, 1518]) and/or imix")
	}
	family := s.family()
	if err := family.CheckVLAN(); err != nil {
		return s.errf("vlan", "%v", err)
	}
	for i, sz := range s.Sizes {
		if lo := family.MinFrameSize(); !sz.IMIX && (sz.Bytes < lo || sz.Bytes > pktgen.MaxFrameSize) {
			return s.errf(fmt.Sprintf("frame_sizes[%d]", i), "%d: want %d-%d bytes%s (Ethernet frame including FCS%s) or imix",
				sz.Bytes, lo, pktgen.MaxFrameSize, family.FamilyText(), family.HeadersText())
		}
	}
	if len(s.IMIX) == 0 {
		s.IMIX = slices.Clone(DefaultIMIX)
	}
	if len(s.IMIX) > pktgen.MaxIMIX {
		return s.errf("imix", "%d sizes: pktgen's imix_weights takes at most %d", len(s.IMIX), pktgen.MaxIMIX)
	}
	for i, w := range s.IMIX {
		if err := w.Check(); err != nil {
			return s.errf(fmt.Sprintf("imix[%d]", i), "size %d weight %d: %v", w.Size, w.Weight, err)
		}
		if err := family.CheckFrameSize(w.Size); err != nil && slices.ContainsFunc(s.Sizes, func(z Size) bool { return z.IMIX }) {
			return s.errf(fmt.Sprintf("imix[%d]", i), "size %d weight %d: %v", w.Size, w.Weight, err)
		}
	}
	if s.Threads < 0 || s.Threads > coordinator.MaxThreads {
		return s.errf("threads", "%d: want 0 (one per queue) to %d", s.Threads, coordinator.MaxThreads)
	}
	if s.Search.Type == "" {
		s.Search.Type = search.TypeRFC2544
		if len(s.Rates) > 0 {
			s.Search.Type = search.TypeNone
		}
	}
	if err := s.Search.Type.Check(); err != nil {
		return s.errf("search.type", "%v", err)
	}
	if s.Search.Type == search.TypeNone && len(s.Rates) == 0 {
		return s.errf("rates", "missing: a sweep (search: none) needs offered rates, e.g. [10%%, 50%%, 100%%] or [100000, 200000]")
	}
	if s.Search.Type != search.TypeNone && len(s.Rates) > 0 {
		return s.errf("rates", "a %s search finds the rates itself; give rates only with search type none", s.Search.Type)
	}
	for i, r := range s.Rates {
		if err := r.Check(s.Threads); err != nil {
			return s.errf(fmt.Sprintf("rates[%d]", i), "%v", err)
		}
	}
	sr := &s.Search
	if !(sr.LossGoal >= 0 && sr.LossGoal < 1) { // NaN too
		return s.errf("search.loss_goal", "%g: want a loss ratio from 0 to below 1 (0.001 = 0.1 %%)", sr.LossGoal)
	}
	// Goals, max_trials and initial_duration left out are the search's
	// own defaults (NDR 0 and PDR 0.5 %, its trial budget, 1 s).
	for i, g := range sr.Goals {
		if !(g >= 0 && g < 1) {
			return s.errf(fmt.Sprintf("search.goals[%d]", i), "%g: want a loss ratio from 0 to below 1", g)
		}
	}
	defRate := func(r *Rate, pct float64) {
		if *r == (Rate{}) {
			r.Percent = pct
		}
	}
	defRate(&sr.Resolution, 1)
	defRate(&sr.Min, 1)
	defRate(&sr.Max, 100)
	if err := sr.Resolution.check(); err != nil {
		return s.errf("search.resolution", "%v", err)
	}
	for _, b := range []struct {
		field string
		r     Rate
	}{{"search.min_rate", sr.Min}, {"search.max_rate", sr.Max}} {
		if err := b.r.Check(s.Threads); err != nil {
			return s.errf(b.field, "%v", err)
		}
	}
	if sr.Min.Percent > 0 && sr.Max.Percent > 0 && sr.Min.Percent >= sr.Max.Percent || sr.Min.PPS > 0 && sr.Max.PPS > 0 && sr.Min.PPS >= sr.Max.PPS {
		return s.errf("search.min_rate", "%s is not below max_rate %s", sr.Min, sr.Max)
	}
	if r, lo, hi := sr.Resolution, sr.Min, sr.Max; r.Percent > 0 && lo.Percent > 0 && hi.Percent > 0 && r.Percent >= hi.Percent-lo.Percent ||
		r.PPS > 0 && lo.PPS > 0 && hi.PPS > 0 && r.PPS >= hi.PPS-lo.PPS {
		return s.errf("search.resolution", "%s is not below the span from min_rate %s to max_rate %s: the search would have nothing to find", r, lo, hi)
	}
	if sr.MaxTrials < 0 || sr.MaxTrials > 1000 {
		return s.errf("search.max_trials", "%d: want 1-1000 (0 or none: the search's own budget)", sr.MaxTrials)
	}
	if s.Duration == 0 {
		s.Duration = Duration(10 * time.Second)
	}
	if s.Duration < Duration(100*time.Millisecond) || s.Duration > Duration(time.Hour) {
		return s.errf("trial_duration", "%s: want 100ms to 1h", time.Duration(s.Duration))
	}
	if sr.Initial < 0 || sr.Initial > s.Duration {
		return s.errf("search.initial_duration", "%s is longer than trial_duration %s", time.Duration(sr.Initial), time.Duration(s.Duration))
	}
	if s.Repetitions == 0 {
		s.Repetitions = 1
	}
	if s.Repetitions < 1 || s.Repetitions > 100 {
		return s.errf("repetitions", "%d: want 1-100", s.Repetitions)
	}
	if l := s.Latency; l != nil {
		if l.Trials == 0 {
			l.Trials = DefaultLatencyTrials
		}
		if l.Duration == 0 {
			l.Duration = DefaultLatencyDuration
		}
		if l.Trials < 1 || l.Trials > 1000 {
			return s.errf("latency.trials", "%d: want 1-1000 (RFC 2544 asks for at least 20)", l.Trials)
		}
		if l.Duration < Duration(100*time.Millisecond) || l.Duration > Duration(time.Hour) {
			return s.errf("latency.trial_duration", "%s: want 100ms to 1h (RFC 2544 asks for at least 120s)", time.Duration(l.Duration))
		}
	}
	if err := s.validateBackToBack(); err != nil {
		return err
	}
	if s.Warmup < 0 || s.Warmup > Duration(10*time.Minute) {
		return s.errf("warmup", "%s: want 0 to 10m", time.Duration(s.Warmup))
	}
	if s.Drain == 0 {
		s.Drain = Duration(time.Second)
	}
	if s.Drain < 0 || s.Drain > Duration(time.Minute) {
		return s.errf("drain", "%s: want 0 to 1m", time.Duration(s.Drain))
	}
	if s.Between.Pause == 0 {
		s.Between.Pause = Duration(time.Second)
	}
	if s.Between.Pause < 0 || s.Between.Pause > Duration(10*time.Minute) {
		return s.errf("between_trials.pause", "%s: want 0 to 10m", time.Duration(s.Between.Pause))
	}
	if s.Backend == "" {
		s.Backend = pktgen.BackendAuto
	}
	if err := s.Backend.Check(); err != nil {
		return s.errf("backend", "%v", err)
	}
	if slices.ContainsFunc(s.Sizes, func(z Size) bool { return z.IMIX }) && s.Backend != pktgen.BackendKernel {
		return s.errf("frame_sizes", "imix needs backend: kernel (pktgen's imix_weights); the userspace generators send one size per run")
	}
	if s.Method == "" {
		s.Method = receiver.MethodAuto
	}
	if err := s.Method.Check(); err != nil {
		return s.errf("method", "%v", err)
	}
	if err := s.NeedWakeup.CheckFor(s.Backend == pktgen.BackendAFXDP || s.Method == receiver.MethodAFXDP, fmt.Sprintf("backend %s with method %s", s.Backend, s.Method)); err != nil {
		return s.errf("need_wakeup", "%v", err)
	}
	if err := s.checkPreflight(); err != nil {
		return err
	}
	if err := s.checkPktgen(); err != nil {
		return err
	}
	if err := s.checkLatencyMode(); err != nil {
		return err
	}
	if s.Shortfall == "" {
		s.Shortfall = ShortfallInvalid
	}
	if err := s.Shortfall.Check(); err != nil {
		return s.errf("shortfall", "%v", err)
	}
	return nil
}

// validateBackToBack fills the back-to-back test's defaults (RFC 2544's
// 50 trials, each searching bursts of up to 2 s at the line rate, to the
// frame) and refuses what it cannot run.
func (s *Spec) validateBackToBack() error {
	b := s.BackToBack
	if b == nil {
		return nil
	}
	if b.Trials == 0 {
		b.Trials = DefaultBackToBackTrials
	}
	if b.Duration == 0 {
		b.Duration = DefaultBackToBackDuration
	}
	if b.Rate == (Rate{}) {
		b.Rate.Percent = 100
	}
	if b.Resolution == 0 {
		b.Resolution = 1
	}
	if b.Trials < 1 || b.Trials > 1000 {
		return s.errf("back_to_back.trials", "%d: want 1-1000 (RFC 2544 asks for at least 50)", b.Trials)
	}
	if b.Duration < Duration(time.Millisecond) || b.Duration > MaxBackToBackDuration {
		return s.errf("back_to_back.trial_duration", "%s: want 1ms to %s, the longest burst searched at the rate (RFC 2544 asks for at least 2s)", time.Duration(b.Duration), time.Duration(MaxBackToBackDuration))
	}
	if err := b.Rate.Check(s.Threads); err != nil {
		return s.errf("back_to_back.rate", "%v", err)
	}
	if b.Resolution > MaxBackToBackResolution {
		return s.errf("back_to_back.resolution", "%d frames: want 1 (exact) to %d", b.Resolution, MaxBackToBackResolution)
	}
	return nil
}

// Check refuses r as an offered rate per flow sent by threads threads
// (0: automatic, at least 1): what check refuses, and a rate in packets
// per second that leaves a thread less than 1 pps (pktgen would read a
// rate of 0 as no pacing at all). A percentage is checked against the
// line rate when a trial runs (coordinator.CheckRate).
func (r Rate) Check(threads int) error {
	if err := r.check(); err != nil {
		return err
	}
	if t := max(threads, 1); r.Percent == 0 && r.PPS < float64(t) {
		if threads > 1 {
			return fmt.Errorf("%s: below 1 pps per thread over %d threads: want at least %d pps", r, t, t)
		}
		return fmt.Errorf("%s: below 1 pps: want at least 1 pps per flow (or a percentage of line rate)", r)
	}
	return nil
}

// check refuses a rate that is no rate: NaN, infinite, not positive, or
// above 1000 %.
func (r Rate) check() error {
	switch {
	case math.IsNaN(r.PPS) || math.IsNaN(r.Percent):
		return fmt.Errorf("%s: not a number: want packets per second (100000, 1.5e6) or a percentage of line rate (50%%)", r)
	case math.IsInf(r.PPS, 0) || math.IsInf(r.Percent, 0):
		return fmt.Errorf("%s: not a finite rate: want packets per second (100000, 1.5e6) or a percentage of line rate (50%%)", r)
	case r.Percent > 1000:
		// Above 100 % only makes sense against a shaped path whose rate
		// stands in for the line rate (the lab's --shape).
		return fmt.Errorf("%s: want at most 100%% of line rate (up to 1000%% of a shaped rate)", r)
	case r.Percent <= 0 && r.PPS <= 0:
		return fmt.Errorf("%s: want a positive rate: packets per second (100000, 1.5e6) or a percentage of line rate (50%%)", r)
	}
	return nil
}

// UnmarshalYAML reads 64, "1518" or "imix" (ParseSize).
func (z *Size) UnmarshalYAML(n *yaml.Node) error {
	v, err := ParseSize(n.Value)
	if err != nil {
		return fmt.Errorf("line %d: %w", n.Line, err)
	}
	*z = v
	return nil
}

func (z Size) String() string {
	if z.IMIX {
		return "imix"
	}
	return strconv.Itoa(z.Bytes)
}

// UnmarshalYAML reads 150000, 1.5e6, "1.5mpps", "200kpps" or "50%".
func (r *Rate) UnmarshalYAML(n *yaml.Node) error {
	v, err := ParseRate(n.Value)
	if err != nil {
		return fmt.Errorf("line %d: rate %q: %v", n.Line, n.Value, err)
	}
	*r = v
	return nil
}

// ParseRate reads a rate: packets per second (150000, 1.5e6, 200kpps,
// 1.5mpps) or a percentage of line rate (50%).
func ParseRate(s string) (Rate, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	if p, ok := strings.CutSuffix(t, "%"); ok {
		v, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil {
			return Rate{}, fmt.Errorf("want a percentage such as 50%%")
		}
		return Rate{Percent: v}, nil
	}
	mult := 1.0
	for _, u := range []struct {
		suffix string
		mult   float64
	}{{"mpps", 1e6}, {"kpps", 1e3}, {"pps", 1}} {
		if x, ok := strings.CutSuffix(t, u.suffix); ok {
			t, mult = strings.TrimSpace(x), u.mult
			break
		}
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil {
		return Rate{}, fmt.Errorf("want packets per second (150000, 1.5e6, 200kpps, 1.5mpps) or a percentage of line rate (50%%)")
	}
	return Rate{PPS: v * mult}, nil
}

// UnmarshalYAML reads "10s", "1m30s".
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	v, err := time.ParseDuration(n.Value)
	if err != nil {
		return fmt.Errorf("line %d: duration %q: want a Go duration such as 500ms, 10s, 1m30s", n.Line, n.Value)
	}
	*d = Duration(v)
	return nil
}

// checkPreflight checks what every trial does with its hosts' checks, as
// a run's spec does.
func (s *Spec) checkPreflight() error {
	if s.Preflight == "" {
		s.Preflight = coordinator.PreflightWarn
	}
	if err := s.Preflight.Check(); err != nil {
		return s.errf("preflight", "%v", err)
	}
	return nil
}

// checkLatencyMode checks what every trial times as a run's spec does
// (coordinator.Spec's latency mode, its round trips' method and rate),
// and refuses RFC 2544's latency test with nothing timed.
func (s *Spec) checkLatencyMode() error {
	if s.LatencyMode == "" {
		s.LatencyMode = coordinator.LatencyOneWay
	}
	if err := s.LatencyMode.Check(); err != nil {
		return s.errf("latency_mode", "%v", err)
	}
	if s.LatencyMode == coordinator.LatencyOff && s.Latency != nil {
		return s.errf("latency_mode", "off with the latency test (latency:): the test times every packet: give latency_mode oneway or rtt, or leave latency out")
	}
	if s.RTTRate > latency.MaxRTTRate {
		return s.errf("rtt_rate", "%d pps: want 1 to %d (0: %d)", s.RTTRate, latency.MaxRTTRate, latency.DefaultRTTRate)
	}
	trial := coordinator.Spec{Senders: []string{"s"}, Receivers: []string{"r"}, Count: 1, Method: s.Method, Latency: s.LatencyMode, RTTRate: s.RTTRate}
	if err := trial.Validate(); err != nil {
		return s.errf("latency_mode", "%v", err)
	}
	s.RTTRate = trial.RTTRate
	return nil
}

// family is the run spec of what every trial's frames carry (IPv6, the
// VLAN tag): what sets the smallest frame size.
func (s *Spec) family() *coordinator.Spec { return &coordinator.Spec{IPv6: s.IPv6, VLAN: s.VLAN} }
