package report

import (
	"encoding/csv"
	"strings"
	"testing"
	"time"

	"github.com/linerate/linerate/coordinator/campaign"
	"github.com/linerate/linerate/coordinator/results"
)

// b2bDoc is a campaign of two sizes with RFC 2544's back-to-back test:
// one found (a mean of 3 trials), one the path carried to the longest
// burst searched (a lower bound), and one burst trial.
func b2bDoc() *results.Document {
	return &results.Document{Kind: results.KindCampaign, Summary: []results.SizeResult{
		{Size: 64, ThroughputPPS: 1000, Trials: 1, BackToBack: &results.BackToBack{RatePPS: 100000, SearchedFrames: 1000, ResolutionFrames: 1,
			Frames: []uint64{300, 500, 200}, MeanFrames: 1000.0 / 3, MinFrames: 200, MaxFrames: 500, MeanSec: 1000.0 / 3 / 100000, Bursts: 15}},
		{Size: 1518, ThroughputPPS: 100, Trials: 1, BackToBack: &results.BackToBack{RatePPS: 8000, SearchedFrames: 16000, ResolutionFrames: 1,
			Frames: []uint64{16000}, MeanFrames: 16000, MinFrames: 16000, MaxFrames: 16000, MeanSec: 2, LowerBound: true, Bursts: 1,
			Note: "the path carried the longest burst searched"}},
	}, Trials: []results.Trial{
		{N: 1, Size: 64, Phase: "back-to-back", OfferedPPS: 100000, Burst: 301, DurationSec: 0.00301, Sent: 301, Received: 300, Lost: 1, Valid: true},
	}}
}

// The campaign table has a BACK-TO-BACK section: mean, range, mean
// burst, "≥" for a lower bound, and the test's notes.
func TestTableBackToBack(t *testing.T) {
	var b strings.Builder
	if err := Table(&b, b2bDoc()); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"BACK-TO-BACK   RATE/FLOW  TRIALS      MEAN    MIN     MAX  MEAN BURST  SEARCHED  BURSTS",
		"          64  100.0 kpps       3     333.3    200     500     3.333ms      1000      15",
		"        1518    8.0 kpps       1  ≥16000.0  16000  ≥16000          2s     16000       1", "1518: back-to-back: the path carried the longest burst searched"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table without %q:\n%s", want, b.String())
		}
	}
	var none strings.Builder
	doc := b2bDoc()
	doc.Summary[0].BackToBack, doc.Summary[1].BackToBack = nil, nil
	if err := Table(&none, doc); err != nil || strings.Contains(none.String(), "BACK-TO-BACK") {
		t.Errorf("a campaign without the test has its section: %v\n%s", err, none.String())
	}
}

// csvOf is doc's CSV, its records and each column's index by name.
func csvOf(t *testing.T, doc *results.Document) (recs [][]string, col map[string]int) {
	t.Helper()
	var b strings.Builder
	if err := CSV(&b, doc); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(strings.NewReader(b.String())).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col = map[string]int{}
	for i, c := range recs[0] {
		col[c] = i
	}
	return recs, col
}

// The CSV's back-to-back columns: the summary's figures per size, the
// burst's frames on its trial row, empty elsewhere.
func TestCSVBackToBack(t *testing.T) {
	recs, col := csvOf(t, b2bDoc())
	get := func(r []string, names ...string) string {
		var out []string
		for _, n := range names {
			out = append(out, r[col[n]])
		}
		return strings.Join(out, " ")
	}
	names := []string{"burst", "back_to_back_frames", "back_to_back_min_frames", "back_to_back_max_frames", "back_to_back_s", "back_to_back_rate_pps", "back_to_back_trials", "back_to_back_lower_bound"}
	for i, want := range []string{
		" 333.3333333333333 200 500 0.0033333333333333335 100000 3 false",
		" 16000 16000 16000 2 8000 1 true",
		"301       ",
	} {
		if got := get(recs[i+1], names...); got != want {
			t.Errorf("row %d (%s): %q, want %q", i+1, recs[i+1][0], got, want)
		}
	}
	if recs[0][len(recs[0])-1] != "back_to_back_lower_bound" {
		t.Errorf("the back-to-back columns are not the last: %v", recs[0])
	}
}

// The HTML report has a back-to-back table with a row per size that has
// the test, and names each burst's frames in the trials.
func TestHTMLBackToBack(t *testing.T) {
	var b strings.Builder
	if err := HTML(&b, b2bDoc()); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`<table class="back-to-back">`, `<tr data-size="64"><td>64</td><td class="n">333.3</td><td class="n">200</td><td class="n">500</td>`,
		`<tr data-size="1518"><td>1518</td><td class="n">≥ 16000.0</td>`, "<td>back-to-back: 301 frames</td>"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("HTML without %q", want)
		}
	}
}

// The progress line names a burst's frames.
func TestProgressLineBurst(t *testing.T) {
	line, ok := ProgressLine(campaign.Event{Event: campaign.EventTrial, Size: 64, N: 7, Phase: campaign.PhaseBackToBack, Burst: 273, OfferedPPS: 1e5, Valid: true, SizesTotal: 1}, time.Second)
	if !ok || !strings.Contains(line, "64 B trial 7 back-to-back 273 frames at 100") || !strings.Contains(line, ": loss |") {
		t.Errorf("%q", line)
	}
}

// A back-to-back burst is no load: the loss chart leaves it out, and a
// document that names no throughput trial does not get one from it.
func TestBurstsAreNoLoad(t *testing.T) {
	doc := b2bDoc()
	doc.Trials = append(doc.Trials, results.Trial{N: 2, Size: 64, Phase: "back-to-back", OfferedPPS: 100000, Burst: 300, Sent: 300, Received: 300, Valid: true, Passed: true},
		results.Trial{N: 3, Size: 64, Phase: "sweep", OfferedPPS: 500, DurationSec: 1, Sent: 500, Received: 500, Valid: true, Passed: true})
	if tt := doc.ThroughputTrialOf(doc.Summary[0]); tt == nil || tt.N != 3 {
		t.Errorf("throughput trial %+v, want the sweep's (3)", tt)
	}
	c := lossChart(doc, sizeViews(doc))
	var plotted []int
	for _, s := range c.Series {
		for _, p := range s.Points {
			plotted = append(plotted, p.N)
		}
	}
	if len(plotted) != 1 || plotted[0] != 3 {
		t.Errorf("the loss chart plots trials %v, want only the sweep's (3)", plotted)
	}
}
