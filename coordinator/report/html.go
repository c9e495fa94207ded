package report

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"strconv"
	"time"

	"github.com/linerate/linerate/coordinator"
	"github.com/linerate/linerate/coordinator/results"
)

//go:embed report.html.tmpl
var htmlSource string

// page is what the HTML template draws.
type page struct {
	Doc      *results.Document
	Title    string
	Took     string
	Trials   []results.Trial
	Sizes    []sizeView
	Charts   []*chart
	Hosts    []hostView
	Run      *coordinator.Result
	Spec     string
	Lab      string
	Warnings []string
	// Preflight is the run's hosts' checks (nil: none).
	Preflight *preflightView

	// LatencyCharts are the delays' charts (none when nothing was timed).
	LatencyCharts []*chart
}

var htmlTemplate = template.Must(template.New("report").Funcs(template.FuncMap{
	"pps":   results.FormatPPS,
	"ppsu":  func(v uint64) string { return results.FormatPPS(float64(v)) },
	"bps":   formatBPS,
	"ratio": formatRatio,
	"pct":   func(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) },
	"speed": formatSpeed,
	"dash":  orDash,
	"rcv":   receiverEngine,
	"pdr":   pdr,
	"opt":   optPPS,
	"f1":    func(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) },
	"time": func(t time.Time) string {
		if t.IsZero() {
			return "-"
		}
		return t.UTC().Format("2006-01-02 15:04:05 MST")
	},
	"irqs": results.FormatIRQMap,
}).Parse(htmlSource))

// HTML writes the report as one self-contained HTML file: inline CSS and
// SVG, no script, nothing fetched when it is opened.
func HTML(w io.Writer, doc *results.Document) error {
	sizes := sizeViews(doc)
	mpps, pct := throughputCharts(sizes)
	p := page{
		Doc:    doc,
		Title:  doc.Name,
		Trials: doc.AllTrials(),
		Sizes:  sizes,
		Charts: []*chart{mpps, pct, lossChart(doc, sizes)},
		Hosts:  hostViews(doc, sizes),
		Run:    doc.Run,
	}
	if p.Title == "" {
		p.Title = doc.Kind + " " + doc.ID
	}
	if !doc.Finished.IsZero() && doc.Finished.After(doc.Created) {
		p.Took = doc.Finished.Sub(doc.Created).Round(time.Second).String()
	}
	p.Spec = indentJSON(doc.Spec)
	if doc.Lab != nil {
		if b, err := json.MarshalIndent(doc.Lab, "", "  "); err == nil {
			p.Lab = string(b)
		}
	} else if doc.Run != nil && doc.Run.Lab != nil {
		if b, err := json.MarshalIndent(doc.Run.Lab, "", "  "); err == nil {
			p.Lab = string(b)
		}
	}
	if doc.Run != nil {
		p.Warnings, p.Preflight = doc.Run.OtherWarnings(), preflightOf(doc.Run)
	}
	p.LatencyCharts = append(latencyLoadCharts(doc, sizes), latencyCDFCharts(doc, sizes)...)
	var buf bytes.Buffer
	if err := htmlTemplate.Execute(&buf, p); err != nil {
		return fmt.Errorf("html report of %s: %w", doc.ID, err)
	}
	_, err := w.Write(buf.Bytes())
	return err
}

func indentJSON(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, raw, "", "  "); err != nil {
		return string(raw)
	}
	return buf.String()
}
