package report_test

import (
	"sort"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/linerate/linerate/coordinator"
	"github.com/linerate/linerate/coordinator/campaign"
	"github.com/linerate/linerate/coordinator/results"
	"github.com/linerate/linerate/coordinator/results/resultstest"
	"github.com/linerate/linerate/latency"
)

// flowLatency merges each flow's delays over the trials given, by
// "sender-receiver".
func flowLatency(trials []results.Trial) map[string]*latency.Latency {
	out := map[string]*latency.Latency{}
	for _, t := range trials {
		for _, f := range t.Flows {
			k := f.Sender + "-" + f.Receiver
			out[k] = latency.Merge(out[k], f.Latency)
		}
	}
	return out
}

// checkCDF checks the CDF series cdf-KEY of chart: one step per bucket
// of l that holds any, a polyline of two points a step, and its p50 and
// p99 markers at l's summary's.
func checkCDF(t *testing.T, root *html.Node, chart, key, size string, l *latency.Latency) {
	t.Helper()
	points := series(t, root, chart, "cdf-"+key)[size]
	g := find(find(root, "svg", map[string]string{"id": chart})[0], "g", map[string]string{"data-series": "cdf-" + key})[0]
	steps := len(l.CDF())
	if got, _ := attr(g, "data-steps"); got != strconv.Itoa(steps) {
		t.Errorf("%s %s: data-steps %s, want %d", chart, key, got, steps)
	}
	lines := find(g, "polyline", nil)
	if len(lines) != 1 {
		t.Fatalf("%s %s: %d polylines", chart, key, len(lines))
	}
	if pts, _ := attr(lines[0], "points"); len(strings.Fields(pts)) != 2*steps {
		t.Errorf("%s %s: %d polyline points, want %d (two a step)", chart, key, len(strings.Fields(pts)), 2*steps)
	}
	m := l.Summary()
	if len(points) != 2 {
		t.Fatalf("%s %s: %d markers, want p50 and p99", chart, key, len(points))
	}
	for i, want := range []struct {
		pct string
		us  float64
	}{{"50", m.P50Us}, {"99", m.P99Us}} {
		if pct, _ := attr(points[i], "data-percentile"); pct != want.pct || value(t, points[i]) != want.us {
			t.Errorf("%s %s: marker p%s at %v µs, want p%s at %v µs (the summary's)", chart, key, pct, value(t, points[i]), want.pct, want.us)
		}
	}
}

// The campaign with RFC 2544's latency test: per size a chart of every
// search trial's min, p50, p99 and max (its summary's) in the order of
// offered load, and a CDF per flow over the latency trials, each on its
// stated clock.
func TestReportHTMLLatencyCampaign(t *testing.T) {
	doc := resultstest.CampaignWithLatencyTest()
	root, raw := parseHTML(t, doc)
	checkSelfContained(t, root, raw)
	if len(find(root, "section", map[string]string{"id": "latency"})) != 1 {
		t.Fatal("no latency section")
	}
	for _, s := range doc.Summary {
		key := strconv.Itoa(s.Size)
		var search, lat []results.Trial
		for _, tr := range doc.Trials {
			switch {
			case tr.Size != s.Size:
			case tr.Phase == campaign.PhaseLatency:
				lat = append(lat, tr)
			default:
				search = append(search, tr)
			}
		}
		sort.SliceStable(search, func(i, j int) bool { return search[i].OfferedPPS < search[j].OfferedPPS })
		chart := "chart-latency-load-" + key
		for _, p := range []string{"min", "p50", "p99", "max"} {
			points := series(t, root, chart, "latency-"+p)[key]
			if len(points) != len(search) {
				t.Fatalf("%s %s: %d points, want one per search trial (%d)", chart, p, len(points), len(search))
			}
			for i, pt := range points {
				tr := search[i]
				m := tr.Latency().Summary()
				want := map[string]float64{"min": m.MinUs, "p50": m.P50Us, "p99": m.P99Us, "max": m.MaxUs}[p]
				if n, _ := attr(pt, "data-n"); n != strconv.Itoa(tr.N) || value(t, pt) != want {
					t.Errorf("%s %s point %d: trial %s at %v µs, want trial %d at %v µs", chart, p, i, n, value(t, pt), tr.N, want)
				}
			}
		}
		svg := find(root, "svg", map[string]string{"id": chart})[0]
		if !strings.Contains(text(svg), "clock: estimated ±19 µs") || !strings.Contains(text(svg), "one-way delay (µs, log scale)") {
			t.Errorf("%s does not say its clock and log scale: %q", chart, text(svg))
		}

		cdf := "chart-latency-cdf-" + key
		flows := flowLatency(lat)
		if len(flows) != 2 {
			t.Fatalf("size %s: %d flows in the latency trials", key, len(flows))
		}
		for k, l := range flows {
			checkCDF(t, root, cdf, k, key, l)
		}
		svg = find(root, "svg", map[string]string{"id": cdf})[0]
		for _, want := range []string{"clock estimated ±14 µs: s1 → r1", "clock estimated ±19 µs: s2 → r2", "each flow over the size's 2 RFC 2544 latency trials"} {
			if !strings.Contains(text(svg), want) {
				t.Errorf("%s lacks %q", cdf, want)
			}
		}
	}
}

// A run: one CDF chart, a curve per flow; no load chart. A campaign
// without the latency test: its CDFs are the throughput trials' flows.
// A document that timed nothing has no latency section at all.
func TestReportHTMLLatencyRunAndWithout(t *testing.T) {
	run := resultstest.Run()
	root, _ := parseHTML(t, run)
	for _, f := range run.Run.Flows {
		checkCDF(t, root, "chart-latency-cdf", f.Sender+"-"+f.Receiver, "", f.Latency)
	}
	if n := len(find(root, "svg", map[string]string{"id": "chart-latency-load-512"})); n != 0 {
		t.Error("a run drew a load chart")
	}

	doc := resultstest.Campaign()
	root, _ = parseHTML(t, doc)
	for _, s := range doc.Summary {
		tr := doc.ThroughputTrialOf(s)
		key := strconv.Itoa(s.Size)
		for k, l := range flowLatency([]results.Trial{*tr}) {
			checkCDF(t, root, "chart-latency-cdf-"+key, k, key, l)
		}
		svg := find(root, "svg", map[string]string{"id": "chart-latency-cdf-" + key})[0]
		if want := "the flows of trial " + strconv.Itoa(tr.N) + ", which set the throughput"; !strings.Contains(text(svg), want) {
			t.Errorf("size %s: the CDF does not say %q", key, want)
		}
	}

	for _, d := range []*results.Document{resultstest.Campaign(), resultstest.Run()} {
		for i := range d.Trials {
			d.Trials[i].Flows = stripLatency(d.Trials[i].Flows)
		}
		if d.Run != nil {
			d.Run.Flows = stripLatency(d.Run.Flows)
		}
		root, raw := parseHTML(t, d)
		if len(find(root, "section", map[string]string{"id": "latency"})) != 0 || strings.Contains(string(raw), "chart-latency") {
			t.Errorf("%s without delays: a latency section or chart", d.Kind)
		}
	}
}

func stripLatency(flows []coordinator.Flow) []coordinator.Flow {
	out := append([]coordinator.Flow(nil), flows...)
	for i := range out {
		out[i].Latency = nil
	}
	return out
}
