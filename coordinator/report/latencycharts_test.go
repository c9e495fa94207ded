package report

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/linerate/linerate/coordinator"
	"github.com/linerate/linerate/coordinator/campaign"
	"github.com/linerate/linerate/coordinator/results"
	"github.com/linerate/linerate/latency"
)

// recorded is the delays given, on clock c with bound errUs.
func recorded(c latency.Clock, errUs float64, delays ...int64) *latency.Latency {
	var r latency.Recorder
	for _, d := range delays {
		r.Record(d)
	}
	return &latency.Latency{Histogram: r.H, Clock: c, ClockErrorUs: errUs}
}

// repeat is v n times.
func repeat(v int64, n int) []int64 { return slices.Repeat([]int64{v}, n) }

// pathPoints parses a polyline's points.
func pathPoints(t *testing.T, path string) [][2]float64 {
	t.Helper()
	var out [][2]float64
	for _, p := range strings.Fields(path) {
		var x, y float64
		if _, err := fmt.Sscanf(p, "%g,%g", &x, &y); err != nil {
			t.Fatalf("point %q: %v", p, err)
		}
		out = append(out, [2]float64{x, y})
	}
	return out
}

func closeTo(a, b float64) bool { return math.Abs(a-b) < 0.06 } // the path's 0.1 resolution

// Delays spanning a factor of 20 or more get a log axis in decades (1-2-5
// within three decades), from 1 µs at least, and a delay of 0 sits at its
// bottom and is said; narrower ones a linear axis from 0.
func TestDelayScale(t *testing.T) {
	s, ticks := newDelayScale([]float64{5, 370}, 0, 300)
	if !s.log || s.lo != 1 || s.hi != 1000 || s.title() != "one-way delay (µs, log scale)" {
		t.Fatalf("5..370 µs: %+v %q, want a log axis from 1 to 1000 µs", s, s.title())
	}
	var labels []string
	for _, tk := range ticks {
		labels = append(labels, tk.Label)
	}
	if want := []string{"1", "2", "5", "10", "20", "50", "100", "200", "500", "1000"}; !slices.Equal(labels, want) {
		t.Errorf("ticks %v, want %v", labels, want)
	}
	if !closeTo(s.at(1), 0) || !closeTo(s.at(10), 100) || !closeTo(s.at(100), 200) || !closeTo(s.at(1000), 300) {
		t.Errorf("decades at %v %v %v %v, want 0 100 200 300", s.at(1), s.at(10), s.at(100), s.at(1000))
	}
	if s, ticks := newDelayScale([]float64{12, 150000}, 0, 100); !s.log || s.lo != 10 || s.hi != 1e6 || len(ticks) != 6 || ticks[5].Label != "1M" || ticks[3].Label != "10k" {
		t.Errorf("12 µs..150 ms: %+v %+v, want decades 10..1M", s, ticks)
	}
	s, _ = newDelayScale([]float64{0, 3, 400}, 0, 300)
	if !s.log || s.lo != 1 || s.at(0) != s.at(1) {
		t.Errorf("0, 3..400 µs: %+v, want log from 1 µs with 0 at its bottom", s)
	}
	c := &chart{}
	floorNote(c, s, []float64{0, 3, 400})
	if len(c.Notes) != 1 || c.Notes[0].Text != "delays under 1 µs drawn at 1 µs" {
		t.Errorf("notes %+v, want the floor said", c.Notes)
	}
	for _, vs := range [][]float64{{0, 40}, {0, 0}} {
		s, _ = newDelayScale(vs, 0, 300)
		c = &chart{}
		floorNote(c, s, vs)
		if s.log || s.at(0) != 0 || len(c.Notes) != 0 {
			t.Errorf("%v µs: %+v, notes %+v, want linear with 0 at its origin", vs, s, c.Notes)
		}
	}
	s, ticks = newDelayScale([]float64{30, 50}, 0, 300)
	if s.log || ticks[0].Label != "0" || s.title() != "one-way delay (µs)" || !closeTo(s.at(0), 0) {
		t.Errorf("30..50 µs: %+v %+v, want linear from 0", s, ticks)
	}
}

// A CDF known by construction: 90 packets at 10 µs and 10 at 1000 µs are
// two steps, 90 % and 100 %, drawn across then up; p50 is marked at 10
// µs and p99 at 1000 µs, as the summary says; the clock is said.
func TestCDFChartKnown(t *testing.T) {
	l := recorded(latency.SameHost, 0, append(repeat(10, 90), repeat(1000, 10)...)...)
	c := cdfChart("chart-latency-cdf", "Latency CDF per flow", "", []cdfCurve{{flow: "s1 → r1", key: "s1-r1", l: l}}, "")
	if c == nil || len(c.Series) != 1 {
		t.Fatalf("chart %+v, want one curve", c)
	}
	se := c.Series[0]
	if se.Steps != 2 || se.Flow != "s1 → r1" || se.Name != "cdf-s1-r1" {
		t.Errorf("series %+v, want 2 steps of flow s1 → r1", se)
	}
	xs, _ := newDelayScale([]float64{10, 1000}, plotLeft, plotRight)
	ys := scale{max: 100, from: plotBottom, to: plotTop}
	want := [][2]float64{{xs.at(10), ys.at(0)}, {xs.at(10), ys.at(90)}, {xs.at(1000), ys.at(90)}, {xs.at(1000), ys.at(100)}}
	got := pathPoints(t, se.Path)
	if len(got) != len(want) {
		t.Fatalf("path %v, want %v", got, want)
	}
	for i := range want {
		if !closeTo(got[i][0], want[i][0]) || !closeTo(got[i][1], want[i][1]) {
			t.Errorf("path point %d = %v, want %v", i, got[i], want[i])
		}
	}
	m := l.Summary()
	if m.P50Us != 10 || m.P99Us != 1000 {
		t.Fatalf("summary p50 %v p99 %v, want 10 and 1000 by construction", m.P50Us, m.P99Us)
	}
	if len(se.Points) != 2 || se.Points[0].Pct != "50" || se.Points[0].Value != num(m.P50Us) || !closeTo(se.Points[0].Y, ys.at(50)) ||
		se.Points[1].Pct != "99" || se.Points[1].Value != num(m.P99Us) || !closeTo(se.Points[1].X, xs.at(1000)) {
		t.Errorf("markers %+v, want p50 at 10 µs and p99 at 1000 µs", se.Points)
	}
	if len(c.Notes) != 1 || c.Notes[0].Text != "clock: same-host" || c.XTitle != "one-way delay (µs, log scale)" {
		t.Errorf("notes %+v, x title %q", c.Notes, c.XTitle)
	}
	if cdfChart("x", "x", "", nil, "") != nil {
		t.Error("a chart without curves")
	}
}

// Curves on different clocks say each clock and its flows; an
// unsynchronised one says what its delays mean. Each curve's markers
// are its own summary's p50 and p99 (1..100 µs: 50 and 99).
func TestCDFChartClocks(t *testing.T) {
	var ramp []int64
	for v := int64(1); v <= 100; v++ {
		ramp = append(ramp, v)
	}
	a := recorded(latency.Estimated, 14, ramp...)
	b := recorded(latency.Unsynchronised, 0, append(repeat(3, 40), -7, -2, latency.AbsurdUs)...)
	c := cdfChart("c", "t", "64", []cdfCurve{{"s1 → r1", "s1-r1", a}, {"s2 → r2", "s2-r2", b}}, "the flows of trial 7")
	var notes []string
	for _, n := range c.Notes {
		notes = append(notes, n.Text)
	}
	want := []string{"the flows of trial 7", "clock estimated ±14 µs: s1 → r1", "clock unsynchronised: s2 → r2",
		"unsynchronised clocks: only the delays' spread means something, not their level",
		"s2 → r2: 2 delays below 0 and 1 absurd (≥ 16.8 s) not drawn: a clock problem, not the path"}
	if !slices.Equal(notes, want) {
		t.Errorf("notes %q, want %q", notes, want)
	}
	if c.Series[0].Steps != len(a.CDF()) || len(pathPoints(t, c.Series[0].Path)) != 2*len(a.CDF()) {
		t.Errorf("ramp: %d steps, path of %d points, want %d and twice that", c.Series[0].Steps, len(pathPoints(t, c.Series[0].Path)), len(a.CDF()))
	}
	for i, l := range []*latency.Latency{a, b} {
		m := l.Summary()
		p := c.Series[i].Points
		if p[0].Value != num(m.P50Us) || p[1].Value != num(m.P99Us) || p[0].Size != "64" {
			t.Errorf("curve %d markers %s, %s; summary p50 %v p99 %v", i, p[0].Value, p[1].Value, m.P50Us, m.P99Us)
		}
	}
	if m := a.Summary(); m.P50Us != 50 || m.P99Us != 99 {
		t.Errorf("ramp p50 %v p99 %v, want 50 and 99", m.P50Us, m.P99Us)
	}
}

// loadDoc is a campaign of 64-byte trials at 25, 75 and 50 % of a 1 Mpps
// line rate (run in that order), whose delays grow with the load; a
// trial with latency off; two RFC 2544 latency trials; and 512-byte
// trials that timed nothing.
func loadDoc() *results.Document {
	flow := func(l *latency.Latency) []coordinator.Flow {
		return []coordinator.Flow{{Sender: "s1", Receiver: "r1", Latency: l}}
	}
	d := &results.Document{Kind: results.KindCampaign, Summary: []results.SizeResult{{Size: 64}, {Size: 512}}}
	for i, tc := range []struct {
		frac  float64
		phase string
		l     *latency.Latency
	}{
		{0.25, "initial", recorded(latency.SameHost, 0, 4, 5, 6, 7)},
		{0.75, "initial", recorded(latency.SameHost, 0, 40, 50, 60, 900)},
		{0.5, "final", recorded(latency.SameHost, 0, 10, 20, 30, 40)},
		{0.6, "initial", nil},
		{0.5, campaign.PhaseLatency, recorded(latency.SameHost, 0, 11, 21)},
		{0.5, campaign.PhaseLatency, recorded(latency.SameHost, 0, 12, 22)},
	} {
		d.Trials = append(d.Trials, results.Trial{N: i + 1, Size: 64, Phase: tc.phase, OfferedPPS: tc.frac * 1e6, LinePPS: 1e6, Valid: true, Flows: flow(tc.l)})
	}
	d.Trials = append(d.Trials, results.Trial{N: 7, Size: 512, OfferedPPS: 1e5, LinePPS: 2e5, Valid: true, Flows: flow(nil)})
	return d
}

// The load chart draws a size's search trials that timed packets, in
// the order of load, each percentile its summary's; trials without
// delays and the latency test's are left out; a size with none has no
// chart.
func TestLatencyLoadChart(t *testing.T) {
	d := loadDoc()
	charts := latencyLoadCharts(d, sizeViews(d))
	if len(charts) != 1 || charts[0].ID != "chart-latency-load-64" {
		t.Fatalf("%d charts, want one, of 64 B", len(charts))
	}
	c := charts[0]
	if c.XTitle != "offered load per flow (% of line rate)" || c.YTitle != "one-way delay (µs, log scale)" {
		t.Errorf("titles %q, %q", c.XTitle, c.YTitle)
	}
	var names []string
	for _, s := range c.Series {
		names = append(names, s.Name)
	}
	if !slices.Equal(names, []string{"latency-min", "latency-p50", "latency-p99", "latency-max"}) {
		t.Fatalf("series %v", names)
	}
	wantN := []int{1, 3, 2} // 25, 50, 75 %
	for i, s := range c.Series {
		var ns []int
		for j, p := range s.Points {
			ns = append(ns, p.N)
			m := d.Trials[p.N-1].Latency().Summary()
			want := []float64{m.MinUs, m.P50Us, m.P99Us, m.MaxUs}[i]
			if p.Value != num(want) || p.XValue != strconv.Itoa([]int{25, 50, 75}[j]) {
				t.Errorf("%s trial %d: %s µs at %s %%, want %v", s.Name, p.N, p.Value, p.XValue, want)
			}
		}
		if !slices.Equal(ns, wantN) {
			t.Errorf("%s: trials %v, want %v", s.Name, ns, wantN)
		}
	}
	if p := c.Series[3].Points[2]; p.Value != "900" {
		t.Errorf("max at 75 %%: %s, want 900", p.Value)
	}
	if len(c.Notes) != 1 || c.Notes[0].Text != "clock: same-host" {
		t.Errorf("notes %+v", c.Notes)
	}

	// A run has no load chart; nothing timed, no chart at all.
	run := &results.Document{Kind: results.KindRun}
	if latencyLoadCharts(run, nil) != nil {
		t.Error("a run drew a load chart")
	}
	for i := range d.Trials {
		d.Trials[i].Flows[0].Latency = nil
	}
	if n := len(latencyLoadCharts(d, sizeViews(d))) + len(latencyCDFCharts(d, sizeViews(d))); n != 0 {
		t.Errorf("%d latency charts of a campaign that timed nothing", n)
	}
}

// A campaign size's CDFs are of its latency trials' flows (each flow
// over all of them), else of its latency test's delays together when no
// flow kept them, else of the flows of its throughput trial.
func TestSizeCurves(t *testing.T) {
	d := loadDoc()
	d.Summary[0].ThroughputTrial = 3
	sizes := sizeViews(d)
	curves, source := sizeCurves(d, sizes[0])
	if len(curves) != 1 || curves[0].flow != "s1 → r1" || source != "each flow over the size's 2 RFC 2544 latency trials" {
		t.Fatalf("curves %+v %q", curves, source)
	}
	if m := curves[0].l.Summary(); m.Samples != 4 || m.MinUs != 11 || m.MaxUs != 22 {
		t.Errorf("the flow over both latency trials: %+v, want 11, 12, 21, 22", m)
	}

	merged := recorded(latency.Estimated, 30, 70, 80)
	for i := range d.Trials {
		if d.Trials[i].Phase == campaign.PhaseLatency {
			d.Trials[i].Flows = nil
		}
	}
	d.Summary[0].Latency, d.Summary[0].LatencyTrials = merged, 2
	curves, source = sizeCurves(d, sizeViews(d)[0])
	if len(curves) != 1 || curves[0].flow != "" || curves[0].l != merged || !strings.HasPrefix(source, "all flows of the size's 2 RFC 2544 latency trials together") {
		t.Errorf("no flows kept: %+v %q, want the size's latency", curves, source)
	}
	c := latencyCDFCharts(d, sizeViews(d))
	if len(c) != 1 || c[0].Series[0].Name != "cdf-all" || c[0].Series[0].Label != "all flows" {
		t.Errorf("charts %+v, want one of all flows", c)
	}

	d.Summary[0].Latency = nil
	curves, source = sizeCurves(d, sizeViews(d)[0])
	if len(curves) != 1 || curves[0].l.Summary().MaxUs != 40 || source != "the flows of trial 3, which set the throughput (no RFC 2544 latency test)" {
		t.Errorf("no latency test: %+v %q, want trial 3's flow", curves, source)
	}
}
