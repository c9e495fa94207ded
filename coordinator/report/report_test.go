package report_test

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/linerate/linerate/coordinator"
	"github.com/linerate/linerate/coordinator/report"
	"github.com/linerate/linerate/coordinator/results"
	"github.com/linerate/linerate/coordinator/results/resultstest"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current reports")

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test ./coordinator/report -update writes it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s differs (-want +got; -update rewrites it after review):\n%s", path, diff)
	}
}

func render(t *testing.T, f func(w *bytes.Buffer) error) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := f(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestReportTableGolden(t *testing.T) {
	for name, doc := range map[string]*results.Document{"campaign": resultstest.Campaign(), "run": resultstest.Run()} {
		t.Run(name, func(t *testing.T) {
			golden(t, name+".table.golden", render(t, func(w *bytes.Buffer) error { return report.Table(w, doc) }))
		})
	}
}

// `linerate members` prints what the code at 743d6ca printed
// (testdata/members.table.golden) for the members it wrote as JSON
// (coordinator/testdata/members-743d6ca.json): the backends as announced,
// an unknown speed and health as "-".
func TestMembersTableGolden(t *testing.T) {
	raw, err := os.ReadFile("../testdata/members-743d6ca.json")
	if err != nil {
		t.Fatal(err)
	}
	var ms []coordinator.Member
	if err := json.Unmarshal(raw, &ms); err != nil {
		t.Fatal(err)
	}
	golden(t, "members.table.golden", render(t, func(w *bytes.Buffer) error { return report.Members(w, ms) }))
}

// b is the campaign measured again on a host whose driver changed: 64-byte
// throughput 3 % lower, 1518 not measured, 9000 new.
func regressed() *results.Document {
	b := resultstest.Campaign()
	b.ID, b.Created, b.Tool = "20270601T120000Z-b0b0b0", b.Created.AddDate(0, 6, 0), "v0.5.0"
	b.Summary[0].ThroughputPPS *= 0.97
	b.Summary[0].NDRPPS *= 0.97
	b.Summary[2].Size = 9000
	b.Hosts[2].Driver, b.Hosts[2].Firmware = "i40e 2.25.7", "9.40 0x8000eca2 1.3429.0"
	b.Hosts[2].IRQMap[1].CPU = 9
	return b
}

func TestReportComparisonGolden(t *testing.T) {
	a := resultstest.Campaign()
	golden(t, "compare.golden", render(t, func(w *bytes.Buffer) error { return report.Comparison(w, results.Compare(a, regressed(), 0)) }))
	golden(t, "compare-same.golden", render(t, func(w *bytes.Buffer) error {
		return report.Comparison(w, results.Compare(a, resultstest.Campaign(), 0))
	}))
}

func TestReportListGolden(t *testing.T) {
	dir := t.TempDir()
	st := results.NewStore(dir)
	for _, d := range []*results.Document{resultstest.Campaign(), resultstest.Run(), regressed()} {
		if _, err := st.Save(d); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "future.json"), []byte(`{"schema": "linerate.result/v2", "id": "future"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	entries, err := st.List()
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "list.golden", render(t, func(w *bytes.Buffer) error { return report.List(w, entries) }))
}

func TestReportCSV(t *testing.T) {
	doc := resultstest.Campaign()
	out := render(t, func(w *bytes.Buffer) error { return report.CSV(w, doc) })
	golden(t, "campaign.csv.golden", out)

	recs, err := csv.NewReader(bytes.NewReader(out)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if !cmp.Equal(recs[0], report.CSVHeader) {
		t.Fatalf("header = %v", recs[0])
	}
	col := map[string]int{}
	for i, c := range recs[0] {
		col[c] = i
	}
	var summary, trials [][]string
	for _, r := range recs[1:] {
		switch r[0] {
		case "summary":
			if len(trials) > 0 {
				t.Error("a summary row after the trial rows")
			}
			summary = append(summary, r)
		case "trial":
			trials = append(trials, r)
		default:
			t.Errorf("row kind %q", r[0])
		}
	}
	if len(summary) != len(doc.Summary) || len(trials) != len(doc.Trials) {
		t.Fatalf("%d summary rows and %d trial rows, want %d and %d", len(summary), len(trials), len(doc.Summary), len(doc.Trials))
	}
	for i, r := range summary {
		s := doc.Summary[i]
		got, err := strconv.ParseFloat(r[col["throughput_pps"]], 64)
		if r[col["size"]] != strconv.Itoa(s.Size) || err != nil || got != s.ThroughputPPS || r[col["n"]] != "" {
			t.Errorf("summary row %v, want size %d throughput %v", r, s.Size, s.ThroughputPPS)
		}
	}
	for i, r := range trials {
		tr := doc.Trials[i]
		if r[col["n"]] != strconv.Itoa(tr.N) || r[col["sent"]] != strconv.FormatUint(tr.Sent, 10) || r[col["lost"]] != strconv.FormatUint(tr.Lost, 10) ||
			r[col["passed"]] != strconv.FormatBool(tr.Passed) || r[col["throughput_pps"]] != "" {
			t.Errorf("trial row %v, want trial %+v", r, tr)
		}
	}

	// A run document: its one summary row and one trial.
	recs, err = csv.NewReader(bytes.NewReader(render(t, func(w *bytes.Buffer) error { return report.CSV(w, resultstest.Run()) }))).ReadAll()
	if err != nil || len(recs) != 3 || recs[1][0] != "summary" || recs[2][0] != "trial" || recs[2][col["sent"]] != "40000000" {
		t.Errorf("run CSV = %v, %v", recs, err)
	}
}

func TestReportJSONIsTheDocument(t *testing.T) {
	doc := resultstest.Campaign()
	var buf bytes.Buffer
	if err := report.Write(&buf, "json", doc); err != nil {
		t.Fatal(err)
	}
	back, err := results.Decode(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if back.ID != doc.ID || len(back.Trials) != len(doc.Trials) || back.Summary[0] != doc.Summary[0] {
		t.Errorf("JSON report does not decode to the document")
	}
}

func TestReportFormats(t *testing.T) {
	for path, want := range map[string]report.Format{"r.html": "html", "R.HTM": "html", "x.csv": "csv", "a/b.json": "json", "t.txt": "table", "report": "", "r.pdf": ""} {
		if got := report.FormatFromPath(path); got != want {
			t.Errorf("FormatFromPath(%q) = %q, want %q", path, got, want)
		}
	}
	err := report.Write(&bytes.Buffer{}, "pdf", resultstest.Campaign())
	if err == nil || !strings.Contains(err.Error(), `"pdf"`) || !strings.Contains(err.Error(), "html, csv, json, table") {
		t.Errorf("Write(pdf) = %v", err)
	}
}
