package report_test

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/linerate/linerate/coordinator"
	"github.com/linerate/linerate/coordinator/report"
	"github.com/linerate/linerate/coordinator/results"
	"github.com/linerate/linerate/coordinator/results/resultstest"
)

func attr(n *html.Node, key string) (string, bool) {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val, true
		}
	}
	return "", false
}

func walk(n *html.Node, f func(*html.Node)) {
	f(n)
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		walk(c, f)
	}
}

// find returns the elements named tag (any tag when "") having every
// attribute of want.
func find(root *html.Node, tag string, want map[string]string) []*html.Node {
	var out []*html.Node
	walk(root, func(n *html.Node) {
		if n.Type != html.ElementNode || (tag != "" && n.Data != tag) {
			return
		}
		for k, v := range want {
			if got, ok := attr(n, k); !ok || got != v {
				return
			}
		}
		out = append(out, n)
	})
	return out
}

func parseHTML(t *testing.T, doc *results.Document) (*html.Node, []byte) {
	t.Helper()
	var buf bytes.Buffer
	if err := report.HTML(&buf, doc); err != nil {
		t.Fatal(err)
	}
	root, err := html.Parse(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatalf("the report is not HTML: %v", err)
	}
	return root, buf.Bytes()
}

// series returns the one series data-series=name inside chart id, and
// its points by data-size.
func series(t *testing.T, root *html.Node, chart, name string) map[string][]*html.Node {
	t.Helper()
	charts := find(root, "svg", map[string]string{"id": chart})
	if len(charts) != 1 {
		t.Fatalf("%d <svg id=%s>, want 1", len(charts), chart)
	}
	gs := find(charts[0], "g", map[string]string{"data-series": name})
	if len(gs) != 1 {
		t.Fatalf("%s: %d series %q, want 1", chart, len(gs), name)
	}
	if class, _ := attr(gs[0], "class"); !strings.Contains(" "+class+" ", " series ") {
		t.Errorf("%s %s: class %q lacks series", chart, name, class)
	}
	points := map[string][]*html.Node{}
	for _, c := range find(gs[0], "circle", nil) {
		size, _ := attr(c, "data-size")
		points[size] = append(points[size], c)
	}
	return points
}

func value(t *testing.T, n *html.Node) float64 {
	t.Helper()
	s, _ := attr(n, "data-value")
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("data-value %q: %v", s, err)
	}
	return v
}

// checkSelfContained fails on anything the browser would fetch.
func checkSelfContained(t *testing.T, root *html.Node, raw []byte) {
	t.Helper()
	walk(root, func(n *html.Node) {
		if n.Type != html.ElementNode {
			return
		}
		switch n.Data {
		case "script", "link", "img", "iframe", "object", "embed", "image", "use", "audio", "video", "source":
			t.Errorf("<%s> in a self-contained report", n.Data)
		}
		for _, a := range n.Attr {
			k := strings.ToLower(a.Key)
			if k == "src" || k == "href" || k == "xlink:href" || k == "action" || k == "srcset" || strings.Contains(a.Val, "://") {
				t.Errorf("<%s %s=%q>: an external reference", n.Data, a.Key, a.Val)
			}
		}
	})
	low := strings.ToLower(string(raw))
	for _, bad := range []string{"http://", "https://", "url(", "@import", "@font-face"} {
		if strings.Contains(low, bad) {
			t.Errorf("the report contains %q", bad)
		}
	}
}

func TestReportHTMLCampaign(t *testing.T) {
	doc := resultstest.Campaign()
	root, raw := parseHTML(t, doc)
	checkSelfContained(t, root, raw)

	thr := series(t, root, "chart-throughput-mpps", "throughput-mpps")
	line := series(t, root, "chart-throughput-mpps", "line-rate-mpps")
	pct := series(t, root, "chart-throughput-pct", "throughput-pct")
	line100 := series(t, root, "chart-throughput-pct", "line-rate-pct")
	series(t, root, "chart-throughput-mpps", "ndr-mpps")
	series(t, root, "chart-throughput-mpps", "pdr-mpps")
	for _, s := range doc.Summary {
		key := strconv.Itoa(s.Size)
		if len(thr[key]) != 1 || len(line[key]) != 1 || len(pct[key]) != 1 || len(line100[key]) != 1 {
			t.Fatalf("size %s: %d throughput, %d line-rate, %d pct, %d 100%% points, want 1 each", key, len(thr[key]), len(line[key]), len(pct[key]), len(line100[key]))
		}
		if got := value(t, thr[key][0]); !near(got, s.ThroughputPPS/1e6) {
			t.Errorf("size %s: throughput point %v Mpps, want %v", key, got, s.ThroughputPPS/1e6)
		}
		// The theoretical maximum: pktgen.LinePPS(10G, size − FCS) × 2 flows.
		wantLine := 2 * 1e10 / (float64(s.Size+20) * 8) / 1e6
		if got := value(t, line[key][0]); !near(got, wantLine) {
			t.Errorf("size %s: line-rate point %v Mpps, want %v", key, got, wantLine)
		}
		if got := value(t, pct[key][0]); !near(got, s.LineRatePct) {
			t.Errorf("size %s: %% point %v, want %v", key, got, s.LineRatePct)
		}
		if got := value(t, line100[key][0]); got != 100 {
			t.Errorf("size %s: line-rate %% point %v, want 100", key, got)
		}
		// The throughput point lies below the line-rate point (SVG y grows down).
		ty, _ := attr(thr[key][0], "cy")
		ly, _ := attr(line[key][0], "cy")
		tyf, _ := strconv.ParseFloat(ty, 64)
		lyf, _ := strconv.ParseFloat(ly, 64)
		if tyf < lyf-0.1 {
			t.Errorf("size %s: throughput drawn above the line rate (cy %v < %v)", key, tyf, lyf)
		}
		// Loss: one point per trial of the size.
		loss := series(t, root, "chart-loss", "loss-"+key)
		n := 0
		for _, tr := range doc.Trials {
			if tr.Size == s.Size {
				n++
			}
		}
		if len(loss[key]) != n {
			t.Errorf("loss-%s: %d points, want %d (one per trial)", key, len(loss[key]), n)
		}
		for _, p := range loss[key] {
			lr, _ := attr(p, "data-loss-ratio")
			nAttr, _ := attr(p, "data-n")
			i, _ := strconv.Atoi(nAttr)
			if i < 1 || i > len(doc.Trials) || lr != strconv.FormatFloat(doc.Trials[i-1].LossRatio, 'f', -1, 64) {
				t.Errorf("loss-%s point trial %q loss %q does not match the trial", key, nAttr, lr)
			}
		}
	}
	// Per-flow tables (one per size, two flows each), IRQ map and
	// fingerprint per host.
	flows := find(root, "table", map[string]string{"class": "flows"})
	if len(flows) != 3 {
		t.Errorf("%d flow tables, want 3", len(flows))
	}
	for _, f := range flows {
		if rows := find(f, "tr", nil); len(rows) != 3 {
			t.Errorf("flow table has %d rows, want a header and 2 flows", len(rows))
		}
	}
	for _, h := range doc.Hosts {
		irq := find(root, "table", map[string]string{"class": "irq-map", "data-host": h.Name})
		if len(irq) != 1 || len(find(irq[0], "tr", nil)) != 1+len(h.IRQMap) {
			t.Errorf("host %s: IRQ map table missing or not one row per pin", h.Name)
		}
		if len(find(root, "tr", map[string]string{"data-host": h.Name})) != 2 {
			t.Errorf("host %s: want a row in the hosts and fingerprint tables", h.Name)
		}
		if !bytes.Contains(raw, []byte(h.Firmware)) || !bytes.Contains(raw, []byte(h.IRQMap[3].Name)) {
			t.Errorf("host %s: firmware or IRQ names missing", h.Name)
		}
	}
	if len(find(root, "tr", map[string]string{"class": "failed"})) != 3 {
		t.Errorf("want the 3 failed trials marked in the trials table")
	}
}

func TestReportHTMLRun(t *testing.T) {
	doc := resultstest.Run()
	root, raw := parseHTML(t, doc)
	checkSelfContained(t, root, raw)
	thr := series(t, root, "chart-throughput-mpps", "throughput-mpps")
	line := series(t, root, "chart-throughput-mpps", "line-rate-mpps")
	loss := series(t, root, "chart-loss", "loss-512")
	if len(thr["512"]) != 1 || len(line["512"]) != 1 || len(loss["512"]) != 1 {
		t.Fatalf("run: points %d %d %d, want one each for 512", len(thr["512"]), len(line["512"]), len(loss["512"]))
	}
	if got := value(t, thr["512"][0]); !near(got, 3.998) {
		t.Errorf("run throughput %v Mpps, want 3.998", got)
	}
	if got := value(t, loss["512"][0]); !near(got, 0.05) {
		t.Errorf("run loss %v %%, want 0.05", got)
	}
	// A run's hosts table carries the run's own host counters.
	if !bytes.Contains(raw, []byte("restored")) || len(find(root, "table", map[string]string{"class": "flows"})) != 1 {
		t.Error("run: host tuning state or flow table missing")
	}
	for _, absent := range []string{"ndr-mpps", "pdr-mpps"} {
		if len(find(root, "g", map[string]string{"data-series": absent})) != 0 {
			t.Errorf("run: series %s drawn without data", absent)
		}
	}
}

// Degenerate documents still render: a failed campaign without results,
// hosts without link speeds, a mix, and text that must be escaped.
func TestReportHTMLEdges(t *testing.T) {
	failed := resultstest.Campaign()
	failed.Status, failed.Error = "failed", "agent r2, phase arm: connection lost"
	failed.Summary, failed.Trials = nil, nil
	failed.Name = `<script>alert("x")</script>`
	root, raw := parseHTML(t, failed)
	checkSelfContained(t, root, raw)
	if !bytes.Contains(raw, []byte("agent r2, phase arm")) || !bytes.Contains(raw, []byte("no frame sizes in this result")) {
		t.Error("failed campaign: error or empty-chart note missing")
	}

	noSpeed := resultstest.Campaign()
	for i := range noSpeed.Hosts {
		noSpeed.Hosts[i].LinkSpeedMbps = 0
	}
	for i := range noSpeed.Summary {
		noSpeed.Summary[i].LineRatePct = 0
	}
	root, _ = parseHTML(t, noSpeed)
	if len(series(t, root, "chart-throughput-mpps", "line-rate-mpps")) != 0 {
		t.Error("line rate drawn without link speeds")
	}
	if len(series(t, root, "chart-throughput-mpps", "throughput-mpps")) != 3 {
		t.Error("throughput not drawn without link speeds")
	}

	mix := resultstest.Campaign()
	mix.Summary = append(mix.Summary, results.SizeResult{Label: "imix 7:4:1", ThroughputPPS: 5e6, LineRatePct: 50, Trials: 1})
	root, _ = parseHTML(t, mix)
	if p := series(t, root, "chart-throughput-mpps", "line-rate-mpps")["imix 7:4:1"]; len(p) != 1 || !near(value(t, p[0]), 10) {
		t.Error("imix: line rate not derived from its stored % of line rate")
	}
}

func near(a, b float64) bool { return a-b < 1e-6*max(1, b) && b-a < 1e-6*max(1, b) }

// A document whose sizes were measured against a shaper (as `lab
// campaign --shape`) while the hosts announce 10 G links: the table,
// the CSV, both % charts and the loss chart use the stored line rate
// and say what set it; nothing is re-derived from the links.
func TestReportOneLineRate(t *testing.T) {
	doc := resultstest.Campaign()
	line := map[int]float64{} // per flow, by size
	for i := range doc.Summary {
		s := &doc.Summary[i]
		s.LinePPS, s.LineBasis = s.ThroughputPPS/0.98, "the lab switch port's shaper (50.0 Mb/s)"
		s.LineRatePct = 100 * s.ThroughputPPS / s.LinePPS
		line[s.Size] = s.LinePPS / 2
	}
	for i := range doc.Trials {
		doc.Trials[i].LinePPS = line[doc.Trials[i].Size]
	}
	root, _ := parseHTML(t, doc)
	pct := series(t, root, "chart-throughput-pct", "throughput-pct")
	for _, s := range doc.Summary {
		key := strconv.Itoa(s.Size)
		if got := value(t, pct[key][0]); !near(got, 98) {
			t.Errorf("size %s: %% chart at %v, want 98 (of the stored line rate)", key, got)
		}
		li := find(root, "li", map[string]string{"data-size": key})
		if len(li) != 1 || !strings.Contains(text(li[0]), s.LineBasis) {
			t.Errorf("size %s: the HTML does not say what set its line rate", key)
		}
		loss := series(t, root, "chart-loss", "loss-"+key)
		for _, p := range loss[key] {
			nAttr, _ := attr(p, "data-n")
			i, _ := strconv.Atoi(nAttr)
			tr := doc.Trials[i-1]
			x, _ := attr(p, "data-x")
			got, _ := strconv.ParseFloat(x, 64)
			if want := 100 * tr.OfferedPPS / tr.LinePPS; !near(got, want) {
				t.Errorf("loss chart, trial %d: offered %v %% of line rate, want %v", tr.N, got, want)
			}
		}
	}
	var tbl bytes.Buffer
	if err := report.Table(&tbl, doc); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(tbl.String(), "64: line rate ") || !strings.Contains(tbl.String(), "shaper (50.0 Mb/s)") || !strings.Contains(tbl.String(), "98.00") {
		t.Errorf("the table does not give the stored line rate, its basis and 98 %%:\n%s", tbl.String())
	}
	var csvOut bytes.Buffer
	if err := report.CSV(&csvOut, doc); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(csvOut.String(), ",the lab switch port's shaper (50.0 Mb/s),") {
		t.Errorf("the CSV has no line_basis:\n%s", csvOut.String())
	}
}

// text is the text inside n.
func text(n *html.Node) string {
	var b strings.Builder
	walk(n, func(c *html.Node) {
		if c.Type == html.TextNode {
			b.WriteString(c.Data)
		}
	})
	return b.String()
}

// A run both ways names each flow's direction in the HTML flow table.
func TestReportHTMLDirections(t *testing.T) {
	doc := resultstest.Run()
	run := *doc.Run
	run.Flows = append([]coordinator.Flow(nil), run.Flows...)
	run.Flows[0].Direction = coordinator.Reverse
	_, raw := parseHTML(t, results.FromRun(&run))
	want := run.Flows[0].Sender + " → " + run.Flows[0].Receiver + " reverse"
	if !bytes.Contains(raw, []byte(want)) {
		t.Errorf("HTML lacks %q", want)
	}
}
