package report

import (
	"fmt"
	"math"
	"sort"
	"strconv"

	"github.com/linerate/linerate/coordinator/results"
)

// Chart geometry (SVG user units; the SVG scales to its box).
const (
	chartW      = 600.0
	plotLeft    = 64.0
	plotRight   = chartW - 16
	plotTop     = 16.0
	plotBottom  = 276.0
	legendTop   = 334.0
	legendRow   = 18.0
	legendWidth = 176.0
)

// lineRateColor draws the theoretical maximum (no other element uses it).
const lineRateColor = "#b8860b"

var palette = []string{"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf"}

// chart is one SVG chart, laid out in Go, drawn by the template.
type chart struct {
	ID, Title, XTitle, YTitle string
	H                         float64 // viewBox height (grows with the legend)
	Left, Right, Top, Bottom  float64
	TickEnd                   float64 // x tick marks run from Bottom to here
	XTicks, YTicks            []tick
	Series                    []*series
	Empty                     string // set when there is nothing to draw, and why
	// Notes are lines under the legend: what the chart's numbers are
	// on (a clock) and how they are drawn.
	Notes []note
}

// note is one line of a chart's notes, at Y.
type note struct {
	Y    float64
	Text string
}

type tick struct {
	Pos   float64 // x (XTicks) or y (YTicks) in SVG units
	Label string
}

type series struct {
	Name   string // data-series
	Label  string // legend text
	Class  string // extra class on the <g>
	Color  string
	Dashed bool
	Size   string // data-size, for per-size series
	Flow   string // data-flow: "s1 → r1", for per-flow series
	Steps  int    // data-steps: a CDF's steps (its polyline has two points each)
	Path   string // polyline points
	Points []point
	// Legend position.
	LX, LY float64
}

type point struct {
	X, Y   float64
	R      float64
	Hollow bool
	Size   string // data-size
	Value  string // data-value: the y value in the chart's unit
	N      int    // data-n: the trial, 0 when not a trial
	// Loss and latency charts: data-x (the offered load in the x axis's
	// unit), data-offered-pps and (loss) data-loss-ratio.
	XValue, Offered, Loss string
	// Pct is data-percentile: the percentile a CDF's marker is at.
	Pct   string
	Title string
}

// scale maps [0, max] onto [from, to].
type scale struct{ max, from, to float64 }

func (s scale) at(v float64) float64 {
	if s.max <= 0 {
		return s.from
	}
	return s.from + (s.to-s.from)*v/s.max
}

// niceTicks returns a round axis maximum ≥ max and ticks from 0 to it.
func niceTicks(max float64) (float64, []float64) {
	if max <= 0 || math.IsNaN(max) || math.IsInf(max, 0) {
		max = 1
	}
	raw := max / 5
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := 10 * mag
	for _, m := range []float64{1, 2, 2.5, 5} {
		if raw <= m*mag {
			step = m * mag
			break
		}
	}
	top := math.Ceil(max/step-1e-9) * step
	var ticks []float64
	for i := 0; float64(i)*step <= top+step/1e6; i++ {
		ticks = append(ticks, float64(i)*step)
	}
	return top, ticks
}

// tickLabel prints v with as many decimals as step needs.
func tickLabel(v, step float64) string {
	dec := 0
	for s := step; dec < 6 && math.Abs(s-math.Round(s)) > 1e-9; s *= 10 {
		dec++
	}
	return strconv.FormatFloat(v, 'f', dec, 64)
}

// yTicks are ticks at values on s, labelled with as many decimals as
// their step needs.
func yTicks(values []float64, s interface{ at(float64) float64 }) []tick {
	var out []tick
	step := 0.0
	if len(values) > 1 {
		step = values[1] - values[0]
	}
	for _, v := range values {
		out = append(out, tick{Pos: s.at(v), Label: tickLabel(v, step)})
	}
	return out
}

func newChart(id, title, xTitle, yTitle string) *chart {
	return &chart{ID: id, Title: title, XTitle: xTitle, YTitle: yTitle, Left: plotLeft, Right: plotRight, Top: plotTop, Bottom: plotBottom, TickEnd: plotBottom + 5}
}

// layoutLegend places the legend entries under the plot, wrapping rows.
func (c *chart) layoutLegend() {
	perRow := max(int(math.Floor((chartW-plotLeft)/legendWidth)), 1)
	for i, s := range c.Series {
		s.LX = plotLeft + float64(i%perRow)*legendWidth
		s.LY = legendTop + float64(i/perRow)*legendRow
	}
	rows := (len(c.Series) + perRow - 1) / perRow
	c.H = legendTop + float64(max(rows, 1))*legendRow
	for i := range c.Notes {
		c.Notes[i].Y = c.H + 4
		c.H += legendRow
	}
}

// note adds a line to the chart's notes (layoutLegend places them).
func (c *chart) note(text string) { c.Notes = append(c.Notes, note{Text: text}) }

func (s *series) add(p point) {
	s.Points = append(s.Points, p)
	s.line(p.X, p.Y)
}

// line extends the series' polyline to (x, y) without a point.
func (s *series) line(x, y float64) {
	if s.Path != "" {
		s.Path += " "
	}
	s.Path += fmt.Sprintf("%.1f,%.1f", x, y)
}

// throughputCharts are chart (a): throughput against frame size, in Mpps
// with the theoretical maximum, and in % of it with 100 % drawn.
func throughputCharts(sizes []sizeView) (*chart, *chart) {
	mpps := newChart("chart-throughput-mpps", "Throughput vs frame size (Mpps)", "frame size (bytes, with FCS)", "Mpps")
	pct := newChart("chart-throughput-pct", "Throughput vs frame size (% of line rate)", "frame size (bytes, with FCS)", "% of line rate")
	if len(sizes) == 0 {
		mpps.Empty, pct.Empty = "no frame sizes in this result", "no frame sizes in this result"
		mpps.layoutLegend()
		pct.layoutLegend()
		return mpps, pct
	}
	// Categorical x: one slot per size.
	slot := (plotRight - plotLeft) / float64(len(sizes))
	xAt := func(i int) float64 { return plotLeft + slot*(float64(i)+0.5) }
	for i, s := range sizes {
		mpps.XTicks = append(mpps.XTicks, tick{Pos: xAt(i), Label: s.Key})
		pct.XTicks = append(pct.XTicks, tick{Pos: xAt(i), Label: s.Key})
	}

	top := 0.0
	hasNDR, hasPDR := false, false
	for _, s := range sizes {
		top = math.Max(top, math.Max(s.ThroughputPPS, s.LinePPS))
		top = math.Max(top, math.Max(s.NDRPPS, s.PDRPPS))
		hasNDR = hasNDR || s.NDRPPS > 0
		hasPDR = hasPDR || s.PDRPPS > 0
	}
	yMax, yVals := niceTicks(top / 1e6 * 1.05)
	ys := scale{max: yMax, from: plotBottom, to: plotTop}
	mpps.YTicks = yTicks(yVals, ys)

	line := &series{Name: "line-rate-mpps", Label: "line rate (theoretical max)", Class: "line-rate", Color: lineRateColor, Dashed: true}
	thr := &series{Name: "throughput-mpps", Label: "throughput", Color: palette[0]}
	ndr := &series{Name: "ndr-mpps", Label: "NDR", Color: palette[2]}
	pdr := &series{Name: "pdr-mpps", Label: "PDR", Color: palette[4]}
	for i, s := range sizes {
		x := xAt(i)
		if s.LinePPS > 0 {
			line.add(point{X: x, Y: ys.at(s.LinePPS / 1e6), R: 3, Hollow: true, Size: s.Key, Value: num(s.LinePPS / 1e6),
				Title: fmt.Sprintf("%s B: line rate %s", s.Key, results.FormatPPS(s.LinePPS))})
		}
		title := fmt.Sprintf("%s B: throughput %s", s.Key, results.FormatPPS(s.ThroughputPPS))
		if s.GeneratorLimited {
			title += " (generator-limited: a lower bound)"
		}
		thr.add(point{X: x, Y: ys.at(s.ThroughputPPS / 1e6), R: 4.5, Hollow: s.GeneratorLimited, Size: s.Key, Value: num(s.ThroughputPPS / 1e6), N: trialN(s), Title: title})
		if s.NDRPPS > 0 {
			ndr.add(point{X: x, Y: ys.at(s.NDRPPS / 1e6), R: 3.5, Size: s.Key, Value: num(s.NDRPPS / 1e6), Title: fmt.Sprintf("%s B: NDR %s", s.Key, results.FormatPPS(s.NDRPPS))})
		}
		if s.PDRPPS > 0 {
			pdr.add(point{X: x, Y: ys.at(s.PDRPPS / 1e6), R: 3.5, Size: s.Key, Value: num(s.PDRPPS / 1e6),
				Title: fmt.Sprintf("%s B: PDR %s (loss ≤ %s)", s.Key, results.FormatPPS(s.PDRPPS), formatRatio(s.PDRGoal))})
		}
	}
	mpps.Series = []*series{line, thr}
	if hasNDR {
		mpps.Series = append(mpps.Series, ndr)
	}
	if hasPDR {
		mpps.Series = append(mpps.Series, pdr)
	}
	mpps.layoutLegend()

	top = 100
	for _, s := range sizes {
		top = math.Max(top, s.Pct)
	}
	yMax, yVals = niceTicks(top * 1.05)
	ys = scale{max: yMax, from: plotBottom, to: plotTop}
	pct.YTicks = yTicks(yVals, ys)
	line100 := &series{Name: "line-rate-pct", Label: "line rate (100 %)", Class: "line-rate", Color: lineRateColor, Dashed: true}
	thrPct := &series{Name: "throughput-pct", Label: "throughput", Color: palette[0]}
	for i, s := range sizes {
		x := xAt(i)
		line100.add(point{X: x, Y: ys.at(100), R: 3, Hollow: true, Size: s.Key, Value: "100", Title: s.Key + " B: line rate"})
		if s.LinePPS > 0 {
			thrPct.add(point{X: x, Y: ys.at(s.Pct), R: 4.5, Hollow: s.GeneratorLimited, Size: s.Key, Value: num(s.Pct), N: trialN(s),
				Title: fmt.Sprintf("%s B: %.2f %% of line rate", s.Key, s.Pct)})
		}
	}
	pct.Series = []*series{line100, thrPct}
	if len(thrPct.Points) == 0 {
		pct.Empty = "no host reported its link speed: % of line rate is unknown"
	}
	pct.layoutLegend()
	return mpps, pct
}

func trialN(s sizeView) int {
	if s.Trial == nil {
		return 0
	}
	return s.Trial.N
}

// lossChart is chart (b): loss ratio against offered load, one series
// per frame size. Offered load is in % of line rate per flow when every
// trial's line rate is known, else in Mpps per flow. Invalid trials
// (generator-limited, failed) are hollow. Back-to-back bursts are left
// out: a burst's lost frames are its buffer's verdict, not loss at a
// load.
func lossChart(doc *results.Document, sizes []sizeView) *chart {
	var trials []results.Trial
	for _, t := range doc.AllTrials() {
		if t.Burst == 0 {
			trials = append(trials, t)
		}
	}
	load := newLoadAxis(doc, trials)
	offered, xOf, inPct := load.offered, load.x, load.inPct
	c := newChart("chart-loss", "Loss vs offered load, per frame size", load.title, "loss (% of packets sent)")
	if len(trials) == 0 {
		c.Empty = "no trials in this result"
		c.layoutLegend()
		return c
	}
	xTop, yTop := 0.0, 0.0
	if inPct {
		xTop = 100
	}
	for _, t := range trials {
		xTop = math.Max(xTop, xOf(t))
		yTop = math.Max(yTop, 100*t.LossRatio)
	}
	xs := c.loadTicks(xTop)
	if yTop == 0 {
		yTop = 1 // nothing lost: an axis to 1 % shows it
	}
	yMax, yVals := niceTicks(yTop * 1.05)
	ys := scale{max: yMax, from: plotBottom, to: plotTop}
	c.YTicks = yTicks(yVals, ys)

	// One series per summary size (in order), then sizes only trials have.
	for i, sk := range sizeOrder(sizes, trials) {
		size, key := sk.size, sk.key
		var ts []results.Trial
		for _, t := range trials {
			if t.Size == size {
				ts = append(ts, t)
			}
		}
		sort.SliceStable(ts, func(a, b int) bool { return xOf(ts[a]) < xOf(ts[b]) })
		se := &series{Name: "loss-" + seriesKey(key), Label: key + " B", Color: palette[i%len(palette)], Size: key}
		for _, t := range ts {
			state := "passed"
			switch {
			case !t.Valid:
				state = "invalid"
				if t.GeneratorLimited {
					state = "invalid: generator-limited"
				}
			case !t.Passed:
				state = "failed"
			}
			se.add(point{X: xs.at(xOf(t)), Y: ys.at(100 * t.LossRatio), R: 3.5, Hollow: !t.Valid, Size: key, N: t.N,
				Value: num(100 * t.LossRatio), XValue: num(xOf(t)), Offered: num(offered(t)), Loss: num(t.LossRatio),
				Title: fmt.Sprintf("trial %d, %s B %s: offered %s per flow, loss %s (%s)", t.N, key, t.Phase, results.FormatPPS(offered(t)), formatRatio(t.LossRatio), state)})
		}
		c.Series = append(c.Series, se)
	}
	c.layoutLegend()
	return c
}

// loadAxis is the offered load of trials on a chart's x axis: in % of
// line rate per flow when every trial's line rate is known, else in Mpps
// per flow.
type loadAxis struct {
	inPct   bool
	title   string
	offered func(results.Trial) float64 // pps per flow
	x       func(results.Trial) float64 // in the axis's unit
}

func newLoadAxis(doc *results.Document, trials []results.Trial) loadAxis {
	senders := 0
	for _, h := range doc.Hosts {
		if h.Role == "sender" {
			senders++
		}
	}
	offered := func(t results.Trial) float64 {
		if t.OfferedPPS > 0 {
			return t.OfferedPPS
		}
		return t.AchievedPPS
	}
	perFlowLine := func(t results.Trial) float64 {
		if t.LinePPS > 0 {
			return t.LinePPS // the campaign's, as its summary's
		}
		n := len(t.Flows)
		if n == 0 {
			n = max(senders, 1)
		}
		return results.LineRatePPS(doc.Hosts, t.Flows, float64(t.Size)) / float64(n)
	}
	a := loadAxis{inPct: len(trials) > 0, title: "offered load per flow (% of line rate)", offered: offered}
	for _, t := range trials {
		if perFlowLine(t) <= 0 {
			a.inPct = false
		}
	}
	a.x = func(t results.Trial) float64 {
		if a.inPct {
			return 100 * offered(t) / perFlowLine(t)
		}
		return offered(t) / 1e6
	}
	if !a.inPct {
		a.title = "offered load per flow (Mpps)"
	}
	return a
}

// loadTicks lays out an offered-load x axis from 0 to top and returns
// its scale.
func (c *chart) loadTicks(top float64) scale {
	xMax, xVals := niceTicks(top * 1.02)
	xs := scale{max: xMax, from: plotLeft, to: plotRight}
	step := 0.0
	if len(xVals) > 1 {
		step = xVals[1] - xVals[0]
	}
	for _, v := range xVals {
		c.XTicks = append(c.XTicks, tick{Pos: xs.at(v), Label: tickLabel(v, step)})
	}
	return xs
}

// sizeKey is a frame size and its key ("64", "imix 7:4:1").
type sizeKey struct {
	size int
	key  string
}

// sizeOrder is the sizes a per-size chart draws: the summary's (in its
// order), then sizes only trials have.
func sizeOrder(sizes []sizeView, trials []results.Trial) []sizeKey {
	var out []sizeKey
	seen := map[int]bool{}
	add := func(size int) {
		if seen[size] {
			return
		}
		seen[size] = true
		key := results.SizeResult{Size: size}.Key()
		for _, s := range sizes {
			if s.Size == size {
				key = s.Key
			}
		}
		out = append(out, sizeKey{size, key})
	}
	for _, s := range sizes {
		add(s.Size)
	}
	for _, t := range trials {
		add(t.Size)
	}
	return out
}

// seriesKey makes a size key usable in a data-series name ("imix 7:4:1"
// → "imix-7-4-1").
func seriesKey(key string) string {
	b := []byte(key)
	for i, ch := range b {
		if !(ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9') {
			b[i] = '-'
		}
	}
	return string(b)
}
