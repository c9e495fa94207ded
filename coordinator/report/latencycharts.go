package report

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/linerate/linerate/coordinator"
	"github.com/linerate/linerate/coordinator/campaign"
	"github.com/linerate/linerate/coordinator/results"
	"github.com/linerate/linerate/latency"
)

// logRatio is how many times the smallest delay the largest must be for
// a delay axis to be logarithmic: below it a linear axis from 0 shows
// every delay legibly.
const logRatio = 20

// delayScale places delays (µs) on an axis: linear from 0 to hi, or in
// decades from lo to hi. A log axis starts at 1 µs at least: a delay
// under it (the histogram's 1 µs resolution calls it 0) sits at lo.
type delayScale struct {
	log      bool
	lo, hi   float64
	from, to float64
}

func (s delayScale) at(v float64) float64 {
	if !s.log {
		return scale{max: s.hi, from: s.from, to: s.to}.at(v)
	}
	v = min(max(v, s.lo), s.hi)
	return s.from + (s.to-s.from)*math.Log10(v/s.lo)/math.Log10(s.hi/s.lo)
}

// title is the axis title of one-way delays on s.
func (s delayScale) title() string {
	if s.log {
		return "one-way delay (µs, log scale)"
	}
	return "one-way delay (µs)"
}

// newDelayScale lays out an axis over values from `from` to `to`: log
// when the largest is logRatio times the smallest above 0 (1 µs at
// least) or more, with a tick per decade (and at 2 and 5 within each when
// it spans three decades or fewer); else linear from 0 with round ticks,
// where a delay of 0 has its place.
func newDelayScale(values []float64, from, to float64) (delayScale, []tick) {
	lo, hi := math.Inf(1), 0.0
	for _, v := range values {
		if v > 0 {
			lo = min(lo, max(v, 1))
		}
		hi = max(hi, v)
	}
	if hi < logRatio*lo || math.IsInf(lo, 1) {
		top, vals := niceTicks(hi * 1.05)
		s := delayScale{hi: top, from: from, to: to}
		return s, yTicks(vals, s)
	}
	s := delayScale{log: true, lo: math.Pow(10, math.Floor(math.Log10(lo))), hi: math.Pow(10, math.Ceil(math.Log10(hi))), from: from, to: to}
	subs := []float64{1}
	if s.hi/s.lo <= 1000 {
		subs = []float64{1, 2, 5}
	}
	var ticks []tick
	for d := s.lo; d <= s.hi*(1+1e-9); d *= 10 {
		for _, m := range subs {
			if v := d * m; v <= s.hi*(1+1e-9) {
				ticks = append(ticks, tick{Pos: s.at(v), Label: usLabel(v)})
			}
		}
	}
	return s, ticks
}

// usLabel prints a log axis's tick: 5, 50, 500, 5k, 50k, 5M (µs).
func usLabel(v float64) string {
	switch {
	case v >= 1e6:
		return strconv.FormatFloat(v/1e6, 'f', -1, 64) + "M"
	case v >= 1e4:
		return strconv.FormatFloat(v/1e3, 'f', -1, 64) + "k"
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// inRange reports whether l holds delays to draw (not only negative or
// absurd ones).
func inRange(l *latency.Latency) bool {
	return l != nil && l.Samples() > l.Negative+l.Absurd
}

// clockLabel is the clock of l with its bound: "estimated ±14 µs".
func clockLabel(l *latency.Latency) string {
	if l.Clock == "" {
		return "not stated"
	}
	if l.ClockErrorUs > 0 {
		return clockText(l) + " µs"
	}
	return clockText(l)
}

// clockNotes say on a chart the clock its delays ls are on, as the
// text report does: one line when they share one; else a line per clock
// with the curves on it (whose[i] names ls[i]'s curve; nil: each point's
// title says its own clock). An unsynchronised clock adds what its
// delays mean: only their spread, not their level.
func clockNotes(c *chart, ls []*latency.Latency, whose []string) {
	var clocks []string
	on := map[string][]string{}
	unsync := false
	for i, l := range ls {
		t := clockLabel(l)
		if !slices.Contains(clocks, t) {
			clocks = append(clocks, t)
		}
		if whose != nil && !slices.Contains(on[t], whose[i]) {
			on[t] = append(on[t], whose[i])
		}
		unsync = unsync || l.Clock == latency.Unsynchronised
	}
	switch {
	case len(clocks) == 1:
		c.note("clock: " + clocks[0])
	case whose == nil && len(clocks) > 1:
		c.note(fmt.Sprintf("clocks: %s (each point's title says its own)", strings.Join(clocks, ", ")))
	default:
		for _, t := range clocks {
			c.note(fmt.Sprintf("clock %s: %s", t, strings.Join(on[t], ", ")))
		}
	}
	if unsync {
		c.note("unsynchronised clocks: only the delays' spread means something, not their level")
	}
}

// floorNote says on a log chart that delays under its bottom sit there.
func floorNote(c *chart, s delayScale, values []float64) {
	if s.log && slices.ContainsFunc(values, func(v float64) bool { return v < s.lo }) {
		c.note(fmt.Sprintf("delays under %s µs drawn at %s µs", usLabel(s.lo), usLabel(s.lo)))
	}
}

// outOfRangeNote says on a chart how many of whose delays (l's) it
// cannot draw: below 0 (the packet arrived before its send time: the
// clocks disagree) or absurd (16.8 s or more: a clock stepped). The
// figures and curves are of the rest, as the summary's are.
func outOfRangeNote(c *chart, whose string, l *latency.Latency) {
	if l.Negative+l.Absurd > 0 {
		c.note(fmt.Sprintf("%s: %d delays below 0 and %d absurd (≥ 16.8 s) not drawn: a clock problem, not the path", whose, l.Negative, l.Absurd))
	}
}

// loadPercentiles are the figures the load chart draws, in the order of
// its legend.
var loadPercentiles = []struct {
	name, color string
	of          func(latency.Summary) float64
}{
	{"min", palette[2], func(m latency.Summary) float64 { return m.MinUs }},
	{"p50", palette[0], func(m latency.Summary) float64 { return m.P50Us }},
	{"p99", palette[1], func(m latency.Summary) float64 { return m.P99Us }},
	{"max", palette[3], func(m latency.Summary) float64 { return m.MaxUs }},
}

// latencyLoadCharts draw, for a campaign, per frame size, the one-way
// delays (min, p50, p99, max of all its flows together) of every search
// or sweep trial of the size that timed its packets, against its offered
// load (the loss chart's axis), in the order of load. The RFC 2544
// latency trials, all at one rate, are left to the CDFs; a size none of
// whose trials timed any packet has no chart.
func latencyLoadCharts(doc *results.Document, sizes []sizeView) []*chart {
	if doc.Kind != results.KindCampaign {
		return nil
	}
	trials := doc.AllTrials()
	load := newLoadAxis(doc, trials)
	var out []*chart
	for _, sk := range sizeOrder(sizes, trials) {
		type timed struct {
			t results.Trial
			l *latency.Latency
			m latency.Summary
		}
		var ts []timed
		for _, t := range trials {
			if t.Size != sk.size || t.Phase == campaign.PhaseLatency {
				continue
			}
			if l := t.Latency(); inRange(l) {
				ts = append(ts, timed{t, l, l.Summary()})
			}
		}
		if len(ts) == 0 {
			continue
		}
		sort.SliceStable(ts, func(a, b int) bool { return load.x(ts[a].t) < load.x(ts[b].t) })

		c := newChart("chart-latency-load-"+seriesKey(sk.key), "Latency vs offered load, "+sk.key+" B", load.title, "")
		xTop := 0.0
		if load.inPct {
			xTop = 100
		}
		var values []float64
		var ls []*latency.Latency
		for _, tm := range ts {
			xTop = math.Max(xTop, load.x(tm.t))
			for _, p := range loadPercentiles {
				values = append(values, p.of(tm.m))
			}
			ls = append(ls, tm.l)
		}
		xs := c.loadTicks(xTop)
		ys, yt := newDelayScale(values, plotBottom, plotTop)
		c.YTicks, c.YTitle = yt, ys.title()
		for _, p := range loadPercentiles {
			se := &series{Name: "latency-" + p.name, Label: p.name, Color: p.color, Size: sk.key}
			for _, tm := range ts {
				t, v := tm.t, p.of(tm.m)
				se.add(point{X: xs.at(load.x(t)), Y: ys.at(v), R: 3.5, Hollow: !t.Valid, Size: sk.key, N: t.N,
					Value: num(v), XValue: num(load.x(t)), Offered: num(load.offered(t)),
					Title: fmt.Sprintf("trial %d, %s B %s: offered %s per flow, %s %s µs of %d packets (clock %s)", t.N, sk.key, t.Phase, results.FormatPPS(load.offered(t)), p.name, num(v), tm.m.Samples, clockLabel(tm.l))})
			}
			c.Series = append(c.Series, se)
		}
		clockNotes(c, ls, nil)
		outOfRangeNote(c, "these trials", latency.Merge(ls...))
		floorNote(c, ys, values)
		c.layoutLegend()
		out = append(out, c)
	}
	return out
}

// cdfCurve is one distribution a CDF chart draws: a flow's delays, or a
// size's all together (flow "").
type cdfCurve struct {
	flow string // "s1 → r1"
	key  string // its series name's part: "s1-r1"
	l    *latency.Latency
}

// flowCurves are the flows' delays, one curve per flow (sender →
// receiver) that timed any packet, merged over the flows given for it.
func flowCurves(flows []coordinator.Flow) []cdfCurve {
	var out []cdfCurve
	for _, f := range flows {
		if !inRange(f.Latency) {
			continue
		}
		name := f.Sender + " → " + f.Receiver
		i := slices.IndexFunc(out, func(c cdfCurve) bool { return c.flow == name })
		if i < 0 {
			out = append(out, cdfCurve{flow: name, key: f.Sender + "-" + f.Receiver, l: latency.Merge(f.Latency)})
			continue
		}
		out[i].l = latency.Merge(out[i].l, f.Latency)
	}
	return out
}

// sizeCurves are a campaign size's CDFs and what they are of: the flows
// of its RFC 2544 latency trials (each flow over all of them), else the
// size's latency-test delays together when the document keeps no flows
// of its trials, else the flows of the trial that set its throughput.
func sizeCurves(doc *results.Document, s sizeView) ([]cdfCurve, string) {
	var flows []coordinator.Flow
	n := 0
	for _, t := range doc.AllTrials() {
		if t.Size == s.Size && t.Phase == campaign.PhaseLatency {
			flows = append(flows, t.Flows...)
			n++
		}
	}
	if curves := flowCurves(flows); len(curves) > 0 {
		return curves, fmt.Sprintf("each flow over the size's %d RFC 2544 latency trials", n)
	}
	if inRange(s.Latency) {
		return []cdfCurve{{l: s.Latency}}, fmt.Sprintf("all flows of the size's %d RFC 2544 latency trials together (the document keeps no flows of them)", s.LatencyTrials)
	}
	if s.Trial != nil {
		if curves := flowCurves(s.Trial.Flows); len(curves) > 0 {
			return curves, fmt.Sprintf("the flows of trial %d, which set the throughput (no RFC 2544 latency test)", s.Trial.N)
		}
	}
	return nil, ""
}

// latencyCDFCharts draw the delays' cumulative distributions: for a run
// one chart of its flows; for a campaign one per size (sizeCurves).
// Nothing timed, no chart.
func latencyCDFCharts(doc *results.Document, sizes []sizeView) []*chart {
	if doc.Kind != results.KindCampaign {
		if doc.Run == nil {
			return nil
		}
		if c := cdfChart("chart-latency-cdf", "Latency CDF per flow", "", flowCurves(doc.Run.Flows), ""); c != nil {
			return []*chart{c}
		}
		return nil
	}
	var out []*chart
	for _, s := range sizes {
		curves, source := sizeCurves(doc, s)
		if c := cdfChart("chart-latency-cdf-"+seriesKey(s.Key), "Latency CDF per flow, "+s.Key+" B", s.Key, curves, source); c != nil {
			out = append(out, c)
		}
	}
	return out
}

// cdfMarkers are the percentiles marked on each CDF.
var cdfMarkers = []struct {
	q   float64
	pct string
}{{0.50, "50"}, {0.99, "99"}}

// cdfChart draws curves (nil when there are none): x the delay, y the
// share of the curve's packets at or below it, a step per histogram
// bucket (latency.Histogram.CDF: where a bucket's samples sit), and the
// p50 and p99 marked where the steps reach them.
func cdfChart(id, title, size string, curves []cdfCurve, source string) *chart {
	if len(curves) == 0 {
		return nil
	}
	c := newChart(id, title, "", "packets at or below (%)")
	steps := make([][]latency.CDFStep, len(curves))
	var values []float64
	var ls []*latency.Latency
	var labels []string
	for i, cu := range curves {
		steps[i] = cu.l.CDF()
		values = append(values, steps[i][0].DelayUs, steps[i][len(steps[i])-1].DelayUs)
		ls = append(ls, cu.l)
	}
	xs, xt := newDelayScale(values, plotLeft, plotRight)
	c.XTicks, c.XTitle = xt, xs.title()
	yMax, yVals := niceTicks(100)
	ys := scale{max: yMax, from: plotBottom, to: plotTop}
	c.YTicks = yTicks(yVals, ys)
	for i, cu := range curves {
		st := steps[i]
		n := st[len(st)-1].Cumulative
		name, label := cu.key, cu.flow
		if cu.flow == "" {
			name, label = "all", "all flows"
		}
		labels = append(labels, label)
		se := &series{Name: "cdf-" + seriesKey(name), Label: label, Color: palette[i%len(palette)], Size: size, Flow: cu.flow, Steps: len(st)}
		// Each step: across at the share below it, then up to its own.
		below := 0.0
		se.line(xs.at(st[0].DelayUs), ys.at(0))
		for j, s := range st {
			if j > 0 {
				se.line(xs.at(s.DelayUs), ys.at(below))
			}
			below = 100 * float64(s.Cumulative) / float64(n)
			se.line(xs.at(s.DelayUs), ys.at(below))
		}
		for _, m := range cdfMarkers {
			rank := max(uint64(math.Ceil(m.q*float64(n))), 1)
			j := slices.IndexFunc(st, func(s latency.CDFStep) bool { return s.Cumulative >= rank })
			v := st[j].DelayUs
			se.Points = append(se.Points, point{X: xs.at(v), Y: ys.at(100 * m.q), R: 3.5, Size: size, Value: num(v), Pct: m.pct,
				Title: fmt.Sprintf("%s: p%s %s µs of %d packets (clock %s)", label, m.pct, num(v), n, clockLabel(cu.l))})
		}
		c.Series = append(c.Series, se)
	}
	if source != "" {
		c.note(source)
	}
	clockNotes(c, ls, labels)
	for i, l := range ls {
		outOfRangeNote(c, labels[i], l)
	}
	floorNote(c, xs, values)
	c.layoutLegend()
	return c
}
