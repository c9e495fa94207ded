package results

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/linerate/linerate/coordinator"
	"github.com/linerate/linerate/latency"
)

// DefaultThreshold is the margin by which B must be worse than A to be
// flagged as a regression: 2 %.
const DefaultThreshold = 0.02

// DefaultLatencyThreshold is the margin by which B's p99 one-way delay
// must be higher than A's to be flagged: 10 % (delays vary more from run
// to run than rates do).
const DefaultLatencyThreshold = 0.10

// epsilon keeps a change of exactly the threshold from being flagged by
// floating-point noise.
const epsilon = 1e-9

// Ref names a compared document.
type Ref struct {
	ID      string    `json:"id"`
	Kind    string    `json:"kind"`
	Name    string    `json:"name,omitempty"`
	Status  string    `json:"status"`
	Created time.Time `json:"created"`
	Tool    string    `json:"tool_version"`
}

// Comparison is B measured against A (A is the reference: the earlier
// qualification, the known-good NIC or driver).
type Comparison struct {
	A Ref `json:"a"`
	B Ref `json:"b"`
	// Threshold is the fraction by which B may be worse before it is
	// flagged (0.02 = 2 %); LatencyThreshold the fraction by which its p99
	// delay may be higher.
	Threshold        float64 `json:"threshold"`
	LatencyThreshold float64 `json:"latency_threshold"`
	// Sizes are the frame sizes both documents measured, in size order.
	Sizes []SizeDelta `json:"sizes"`
	// OnlyA and OnlyB are the sizes (Key) measured by one side only.
	OnlyA []string `json:"only_a"`
	OnlyB []string `json:"only_b"`
	// Hosts are the hosts whose fingerprints differ, or that took part
	// on one side only.
	Hosts []HostDiff `json:"hosts"`
	// Spec lists the top-level spec fields that differ ("spec" when the
	// specs are not both JSON objects): the two did not ask the same.
	Spec []string `json:"spec_differs"`
	// Regression reports that some size of B is worse than A beyond the
	// threshold.
	Regression bool `json:"regression"`
}

// ErrRegression is a comparison whose B is worse than A beyond the
// threshold (Comparison.Err).
var ErrRegression = errors.New("regression")

// Err is nil when c flagged no regression, else ErrRegression saying
// which sizes of B are worse than A beyond the threshold, and how.
func (c *Comparison) Err() error {
	if !c.Regression {
		return nil
	}
	var sizes []string
	for _, s := range c.Sizes {
		if s.Regression {
			sizes = append(sizes, s.Key()+": "+strings.Join(s.Why, ", "))
		}
	}
	return fmt.Errorf("%w: %s is worse than %s beyond %s%% (%s)", ErrRegression, c.B.ID, c.A.ID,
		strconv.FormatFloat(100*c.Threshold, 'f', -1, 64), strings.Join(sizes, "; "))
}

// SizeDelta is one frame size in both documents. Deltas are B − A;
// percentages are of A.
type SizeDelta struct {
	Size         int     `json:"size"`
	Label        string  `json:"label,omitempty"`
	ThroughputA  float64 `json:"throughput_pps_a"`
	ThroughputB  float64 `json:"throughput_pps_b"`
	DeltaPPS     float64 `json:"delta_pps"`
	DeltaPct     float64 `json:"delta_pct"` // 0 when A is 0
	LineRatePctA float64 `json:"line_rate_pct_a"`
	LineRatePctB float64 `json:"line_rate_pct_b"`
	LossA        float64 `json:"loss_ratio_a"`
	LossB        float64 `json:"loss_ratio_b"`
	LossDelta    float64 `json:"loss_ratio_delta"`
	// NDR and PDR are there when either side has them.
	NDR *RateDelta `json:"ndr,omitempty"`
	PDR *RateDelta `json:"pdr,omitempty"`
	// GeneratorLimitedA/B: that side's throughput is only a lower bound.
	GeneratorLimitedA bool `json:"generator_limited_a,omitempty"`
	GeneratorLimitedB bool `json:"generator_limited_b,omitempty"`
	// Latency compares the one-way delays of the trials that set each
	// side's throughput, when both timed their packets.
	Latency    *LatencyDelta `json:"latency,omitempty"`
	Regression bool          `json:"regression"`
	// Why says what made it a regression (and what to keep in mind).
	Why []string `json:"why,omitempty"`
}

// Key names the size as SizeResult.Key does.
func (s SizeDelta) Key() string { return SizeResult{Size: s.Size, Label: s.Label}.Key() }

// LatencyDelta compares the delays of both sides (µs) and their clocks.
type LatencyDelta struct {
	P50A     float64       `json:"p50_us_a"`
	P50B     float64       `json:"p50_us_b"`
	P99A     float64       `json:"p99_us_a"`
	P99B     float64       `json:"p99_us_b"`
	DeltaPct float64       `json:"p99_delta_pct"`
	ClockA   latency.Clock `json:"clock_a"`
	ClockB   latency.Clock `json:"clock_b"`
}

// RateDelta compares one rate (NDR or PDR) of both sides.
type RateDelta struct {
	A        float64 `json:"a_pps"`
	B        float64 `json:"b_pps"`
	DeltaPPS float64 `json:"delta_pps"`
	DeltaPct float64 `json:"delta_pct"`
}

// HostDiff is a host whose fingerprint differs between A and B. Hosts
// are matched by name; hosts left over are paired by role in name order
// (the same bench with renamed hosts). A or B is empty for a host on one
// side only.
type HostDiff struct {
	A      string      `json:"a"`
	B      string      `json:"b"`
	Role   string      `json:"role"`
	Fields []FieldDiff `json:"fields,omitempty"`
}

// FieldDiff is one fingerprint field that differs.
type FieldDiff struct {
	Field string `json:"field"` // the fingerprint's JSON key
	A     string `json:"a"`
	B     string `json:"b"`
	// Detail, for the IRQ map: the pins that changed.
	Detail string `json:"detail,omitempty"`
}

func refOf(d *Document) Ref {
	return Ref{ID: d.ID, Kind: d.Kind, Name: d.Name, Status: d.Status, Created: d.Created, Tool: d.Tool}
}

// Compare measures b against a, per frame size, flagging a size as a
// regression when b is worse by more than threshold (a fraction; ≤ 0
// means DefaultThreshold): its throughput, NDR or PDR lower by more than
// threshold of a's, or its loss ratio higher by more than threshold (in
// absolute terms: 0.02 = 2 % more of the packets lost). Sizes on one
// side only are listed, not flagged. Host fingerprints that differ are
// listed: a regression usually comes with a new kernel, driver,
// firmware, NIC, link speed or IRQ map.
func Compare(a, b *Document, threshold float64) *Comparison {
	return CompareWith(a, b, threshold, 0)
}

// CompareWith is Compare that also flags a size whose p99 one-way delay
// (of the trial that set its throughput) is higher in b by more than
// latencyThreshold of a's (≤ 0: DefaultLatencyThreshold) and by more
// than both sides' clock bounds; delays on an unsynchronised clock are
// shown, never flagged.
func CompareWith(a, b *Document, threshold, latencyThreshold float64) *Comparison {
	if threshold <= 0 {
		threshold = DefaultThreshold
	}
	if latencyThreshold <= 0 {
		latencyThreshold = DefaultLatencyThreshold
	}
	c := &Comparison{A: refOf(a), B: refOf(b), Threshold: threshold, LatencyThreshold: latencyThreshold, Sizes: []SizeDelta{}, OnlyA: []string{}, OnlyB: []string{}, Hosts: []HostDiff{}, Spec: []string{}}
	rowsA, rowsB := a.Rows(), b.Rows()
	byKey := map[string]SizeResult{}
	for _, r := range rowsB {
		byKey[r.Key()] = r
	}
	seen := map[string]bool{}
	for _, ra := range rowsA {
		rb, ok := byKey[ra.Key()]
		seen[ra.Key()] = true
		if !ok {
			c.OnlyA = append(c.OnlyA, ra.Key())
			continue
		}
		d := compareSize(ra, rb, threshold)
		compareLatency(&d, trialLatency(a, ra), trialLatency(b, rb), latencyThreshold)
		c.Regression = c.Regression || d.Regression
		c.Sizes = append(c.Sizes, d)
	}
	for _, rb := range rowsB {
		if !seen[rb.Key()] {
			c.OnlyB = append(c.OnlyB, rb.Key())
		}
	}
	sort.SliceStable(c.Sizes, func(i, j int) bool { return SizeLess(c.Sizes[i].Size, c.Sizes[j].Size) })
	c.Hosts = compareHosts(a.Hosts, b.Hosts)
	c.Spec = compareSpec(a.Spec, b.Spec)
	return c
}

// SizeLess orders frame sizes ascending, mixes (0) last.
func SizeLess(a, b int) bool {
	if (a == 0) != (b == 0) {
		return b == 0
	}
	return a < b
}

func pct(delta, of float64) float64 {
	if of == 0 {
		return 0
	}
	return 100 * delta / of
}

func compareSize(a, b SizeResult, threshold float64) SizeDelta {
	d := SizeDelta{
		Size: a.Size, Label: a.Label,
		ThroughputA: a.ThroughputPPS, ThroughputB: b.ThroughputPPS,
		DeltaPPS:     b.ThroughputPPS - a.ThroughputPPS,
		LineRatePctA: a.LineRatePct, LineRatePctB: b.LineRatePct,
		LossA: a.LossRatio, LossB: b.LossRatio, LossDelta: b.LossRatio - a.LossRatio,
		GeneratorLimitedA: a.GeneratorLimited, GeneratorLimitedB: b.GeneratorLimited,
	}
	d.DeltaPct = pct(d.DeltaPPS, a.ThroughputPPS)
	worse := func(what string, ra, rb float64) {
		if ra > 0 && (ra-rb)/ra > threshold+epsilon {
			d.Regression = true
			d.Why = append(d.Why, fmt.Sprintf("%s %.2f%% lower", what, 100*(ra-rb)/ra))
		}
	}
	worse("throughput", a.ThroughputPPS, b.ThroughputPPS)
	if a.NDRPPS > 0 || b.NDRPPS > 0 {
		d.NDR = &RateDelta{A: a.NDRPPS, B: b.NDRPPS, DeltaPPS: b.NDRPPS - a.NDRPPS, DeltaPct: pct(b.NDRPPS-a.NDRPPS, a.NDRPPS)}
		if b.NDRPPS > 0 {
			worse("NDR", a.NDRPPS, b.NDRPPS)
		}
	}
	if a.PDRPPS > 0 || b.PDRPPS > 0 {
		d.PDR = &RateDelta{A: a.PDRPPS, B: b.PDRPPS, DeltaPPS: b.PDRPPS - a.PDRPPS, DeltaPct: pct(b.PDRPPS-a.PDRPPS, a.PDRPPS)}
		if b.PDRPPS > 0 {
			worse("PDR", a.PDRPPS, b.PDRPPS)
		}
	}
	if d.LossDelta > threshold+epsilon {
		d.Regression = true
		d.Why = append(d.Why, fmt.Sprintf("loss ratio up %.4g points", 100*d.LossDelta))
	}
	if d.Regression && b.GeneratorLimited {
		d.Why = append(d.Why, "B was generator-limited: its senders, not the device, may be what got slower")
	}
	if a.PDRGoal != b.PDRGoal && (a.PDRPPS > 0 || b.PDRPPS > 0) {
		d.Why = append(d.Why, fmt.Sprintf("PDR goals differ (%g vs %g)", a.PDRGoal, b.PDRGoal))
	}
	return d
}

// trialLatency is the delays of the trial that set r's throughput (nil:
// none, or it timed none).
func trialLatency(d *Document, r SizeResult) *latency.Latency {
	if t := d.ThroughputTrialOf(r); t != nil {
		return t.Latency()
	}
	return nil
}

// compareLatency adds both sides' delays to d and flags a p99 higher in
// b beyond threshold and beyond both clocks' bounds.
func compareLatency(d *SizeDelta, a, b *latency.Latency, threshold float64) {
	if a == nil || b == nil || a.Samples() == 0 || b.Samples() == 0 {
		return
	}
	ma, mb := a.Summary(), b.Summary()
	d.Latency = &LatencyDelta{P50A: ma.P50Us, P50B: mb.P50Us, P99A: ma.P99Us, P99B: mb.P99Us, DeltaPct: pct(mb.P99Us-ma.P99Us, ma.P99Us), ClockA: a.Clock, ClockB: b.Clock}
	if ma.P99Us <= 0 || (mb.P99Us-ma.P99Us)/ma.P99Us <= threshold+epsilon {
		return
	}
	switch {
	case a.Clock == latency.Unsynchronised || b.Clock == latency.Unsynchronised:
		d.Why = append(d.Why, fmt.Sprintf("p99 latency %.2f%% higher, not flagged: on unsynchronised clocks only its spread means something", pct(mb.P99Us-ma.P99Us, ma.P99Us)))
	case mb.P99Us-ma.P99Us <= a.ClockErrorUs+b.ClockErrorUs:
		d.Why = append(d.Why, fmt.Sprintf("p99 latency %.0f µs higher, not flagged: within the clocks' bounds (±%.0f µs)", mb.P99Us-ma.P99Us, a.ClockErrorUs+b.ClockErrorUs))
	default:
		d.Regression = true
		d.Why = append(d.Why, fmt.Sprintf("p99 latency %.2f%% higher (%.0f → %.0f µs)", pct(mb.P99Us-ma.P99Us, ma.P99Us), ma.P99Us, mb.P99Us))
	}
}

// compareHosts matches hosts by name, then the rest by role in name
// order, and returns those that differ or are unmatched.
func compareHosts(a, b []Fingerprint) []HostDiff {
	sorted := func(hs []Fingerprint) []Fingerprint {
		out := append([]Fingerprint(nil), hs...)
		sort.SliceStable(out, func(i, j int) bool { return out[i].Name < out[j].Name })
		return out
	}
	a, b = sorted(a), sorted(b)
	usedB := make([]bool, len(b))
	pairB := make([]int, len(a))
	for i := range a {
		pairB[i] = -1
		for j := range b {
			if !usedB[j] && b[j].Name == a[i].Name {
				pairB[i], usedB[j] = j, true
				break
			}
		}
	}
	for i := range a {
		if pairB[i] >= 0 {
			continue
		}
		for j := range b {
			if !usedB[j] && b[j].Role == a[i].Role {
				pairB[i], usedB[j] = j, true
				break
			}
		}
	}
	out := []HostDiff{}
	for i, ha := range a {
		if pairB[i] < 0 {
			out = append(out, HostDiff{A: ha.Name, Role: ha.Role})
			continue
		}
		hb := b[pairB[i]]
		if f := diffFingerprint(ha, hb); len(f) > 0 || ha.Name != hb.Name {
			out = append(out, HostDiff{A: ha.Name, B: hb.Name, Role: ha.Role, Fields: f})
		}
	}
	for j, hb := range b {
		if !usedB[j] {
			out = append(out, HostDiff{B: hb.Name, Role: hb.Role})
		}
	}
	return out
}

func diffFingerprint(a, b Fingerprint) []FieldDiff {
	var out []FieldDiff
	add := func(field, va, vb string) {
		if va != vb {
			out = append(out, FieldDiff{Field: field, A: va, B: vb})
		}
	}
	itoa := func(v int64) string { return strconv.FormatInt(v, 10) }
	add("role", a.Role, b.Role)
	add("kernel", a.Kernel, b.Kernel)
	add("driver", a.Driver, b.Driver)
	if bothChecked := len(a.Checks) > 0 && len(b.Checks) > 0; bothChecked || a.Firmware != "" && b.Firmware != "" {
		// A firmware unknown to a document that predates the checks
		// (whose facts give a virtual NIC's "driver" or "" its own) is
		// no difference.
		add("firmware", a.Firmware, b.Firmware)
	}
	add("nic", a.NIC, b.NIC)
	add("iface", a.Iface, b.Iface)
	add("link_speed_mbps", itoa(a.LinkSpeedMbps), itoa(b.LinkSpeedMbps))
	add("numa_node", itoa(int64(a.NUMANode)), itoa(int64(b.NUMANode)))
	add("backend", a.Backend, b.Backend)
	add("method", a.Method, b.Method)
	if ma, mb := FormatIRQMap(a.IRQMap), FormatIRQMap(b.IRQMap); ma != mb {
		out = append(out, FieldDiff{Field: "irq_map", A: ma, B: mb, Detail: irqDetail(a.IRQMap, b.IRQMap)})
	}
	add("tool_version", a.Version, b.Version)
	if len(a.Checks) > 0 && len(b.Checks) > 0 {
		// What the hosts' checks read and judged: only when both sides
		// were checked (a document or agent that predates the checks is
		// no difference).
		for _, f := range [][3]string{
			{"cpu_model", a.CPUModel, b.CPUModel}, {"microcode", a.Microcode, b.Microcode}, {"governor", a.Governor, b.Governor},
			{"rings", a.Rings, b.Rings}, {"coalesce", a.Coalesce, b.Coalesce}, {"pause", a.Pause, b.Pause}, {"offloads", a.Offloads, b.Offloads},
		} {
			add(f[0], f[1], f[2])
		}
		for _, id := range checkIDs(a.Checks, b.Checks) {
			if !slices.Contains(runChecks, id) {
				add("check "+id, verdict(a.Checks, id), verdict(b.Checks, id))
			}
		}
	}
	return out
}

// runChecks are the checks whose verdict depends on the run as much as
// on the host: the MTU on the frame size, the clock on the latency mode,
// irqbalance on --irqbalance, the kernel features on the backend and
// method. Two runs of one host differ in them without the host
// changing, so they are no fingerprint difference.
var runChecks = []string{"mtu", "clock", "irqbalance", "kernel"}

// checkIDs are the check ids of either side, sorted.
func checkIDs(a, b map[string]string) []string {
	var ids []string
	for _, m := range []map[string]string{a, b} {
		for id := range m {
			if !slices.Contains(ids, id) {
				ids = append(ids, id)
			}
		}
	}
	sort.Strings(ids)
	return ids
}

// verdict is a check's verdict in checks, "not checked" when absent.
func verdict(checks map[string]string, id string) string {
	if v, ok := checks[id]; ok {
		return v
	}
	return "not checked"
}

// pinKey identifies a pin across runs: its queue and direction.
func pinKey(p coordinator.IRQPin) string {
	k := "q" + strconv.Itoa(p.Queue)
	if p.Dir != "" {
		k += "/" + p.Dir
	}
	return k
}

func sortedPins(pins []coordinator.IRQPin) []coordinator.IRQPin {
	out := append([]coordinator.IRQPin(nil), pins...)
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Queue != out[j].Queue {
			return out[i].Queue < out[j].Queue
		}
		if out[i].Dir != out[j].Dir {
			return out[i].Dir < out[j].Dir
		}
		return out[i].IRQ < out[j].IRQ
	})
	return out
}

// FormatIRQMap prints an IRQ map compactly, by queue:
// "q0:irq57→cpu2 q1/rx:irq58→cpu3"; "-" when empty.
func FormatIRQMap(pins []coordinator.IRQPin) string {
	if len(pins) == 0 {
		return "-"
	}
	parts := make([]string, 0, len(pins))
	for _, p := range sortedPins(pins) {
		parts = append(parts, fmt.Sprintf("%s:irq%d→cpu%d", pinKey(p), p.IRQ, p.CPU))
	}
	return strings.Join(parts, " ")
}

// irqDetail names the queues whose pin changed, appeared or went.
func irqDetail(a, b []coordinator.IRQPin) string {
	index := func(pins []coordinator.IRQPin) (map[string]coordinator.IRQPin, []string) {
		m := map[string]coordinator.IRQPin{}
		var keys []string
		for _, p := range sortedPins(pins) {
			k := pinKey(p)
			if _, dup := m[k]; !dup {
				keys = append(keys, k)
			}
			m[k] = p
		}
		return m, keys
	}
	ma, ka := index(a)
	mb, kb := index(b)
	var parts []string
	for _, k := range ka {
		pa := ma[k]
		pb, ok := mb[k]
		switch {
		case !ok:
			parts = append(parts, fmt.Sprintf("%s only in A (irq%d→cpu%d)", k, pa.IRQ, pa.CPU))
		case pa.CPU != pb.CPU || pa.IRQ != pb.IRQ:
			parts = append(parts, fmt.Sprintf("%s irq%d→cpu%d became irq%d→cpu%d", k, pa.IRQ, pa.CPU, pb.IRQ, pb.CPU))
		}
	}
	for _, k := range kb {
		if _, ok := ma[k]; !ok {
			pb := mb[k]
			parts = append(parts, fmt.Sprintf("%s only in B (irq%d→cpu%d)", k, pb.IRQ, pb.CPU))
		}
	}
	return strings.Join(parts, "; ")
}

// compareSpec lists the top-level fields of two specs that differ.
func compareSpec(a, b json.RawMessage) []string {
	out := []string{}
	if len(a) == 0 && len(b) == 0 {
		return out
	}
	var ma, mb map[string]any
	if json.Unmarshal(a, &ma) != nil || json.Unmarshal(b, &mb) != nil || ma == nil || mb == nil {
		var ca, cb bytes.Buffer
		_ = json.Compact(&ca, a)
		_ = json.Compact(&cb, b)
		if !bytes.Equal(ca.Bytes(), cb.Bytes()) {
			out = append(out, "spec")
		}
		return out
	}
	keys := map[string]bool{}
	for k := range ma {
		keys[k] = true
	}
	for k := range mb {
		keys[k] = true
	}
	for k := range keys {
		if !reflect.DeepEqual(ma[k], mb[k]) {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}
