package main

import (
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/linerate/linerate/coordinator/report"
	"github.com/linerate/linerate/coordinator/results"
	"github.com/linerate/linerate/coordinator/results/resultstest"
)

// resultsDir stores the test campaign, the test run, and the campaign
// measured again half a year later with 64-byte throughput 3 % lower and
// a new driver on r1.
func resultsDir(t *testing.T) (dir string, a, run, b *results.Document) {
	t.Helper()
	dir = filepath.Join(t.TempDir(), "results")
	a, run, b = resultstest.Campaign(), resultstest.Run(), resultstest.Campaign()
	b.ID, b.Created = "20270601T120000Z-b0b0b0", b.Created.AddDate(0, 6, 0)
	b.Summary[0].ThroughputPPS *= 0.97
	b.Hosts[2].Driver = "i40e 2.25.7"
	st := results.NewStore(dir)
	for _, d := range []*results.Document{a, run, b} {
		if _, err := st.Save(d); err != nil {
			t.Fatal(err)
		}
	}
	return dir, a, run, b
}

func TestResultsListShowCLI(t *testing.T) {
	dir, a, run, b := resultsDir(t)
	code, out, errOut := linerate(t, "results", "list", "--dir", dir, "--json")
	if code != 0 {
		t.Fatalf("results list: exit %d: %s", code, errOut)
	}
	var entries []results.Entry
	if err := json.Unmarshal([]byte(out), &entries); err != nil {
		t.Fatalf("results list --json: %v\n%s", err, out)
	}
	if len(entries) != 3 || entries[0].ID != run.ID || entries[1].ID != a.ID || entries[2].ID != b.ID {
		t.Errorf("results list --json = %+v, want run, A, B", entries)
	}
	code, out, _ = linerate(t, "results", "list", "--dir", dir)
	if code != 0 || !strings.Contains(out, a.ID) || !strings.Contains(out, "64 24.18 Mpps (81.2%)") {
		t.Errorf("results list: exit %d\n%s", code, out)
	}

	// show by prefix: the stored document, as a table, as CSV.
	code, out, errOut = linerate(t, "results", "show", "20261201", "--dir", dir, "--json")
	if code != 0 {
		t.Fatalf("results show --json: exit %d: %s", code, errOut)
	}
	got, err := results.Decode(strings.NewReader(out))
	if err != nil || got.ID != a.ID || len(got.Trials) != len(a.Trials) || got.Summary[2] != a.Summary[2] {
		t.Errorf("results show --json: %v, %+v", err, got)
	}
	code, out, _ = linerate(t, "results", "show", "20261130", "--dir", dir)
	if code != 0 || !strings.HasPrefix(out, "run "+run.ID) || !strings.Contains(out, "s2→r2") {
		t.Errorf("results show (table): exit %d\n%s", code, out)
	}
	code, out, _ = linerate(t, "results", "show", filepath.Join(dir, a.ID+".json"), "--csv")
	recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if code != 0 || err != nil || len(recs) != 1+len(a.Summary)+len(a.Trials) || recs[0][0] != "row" {
		t.Errorf("results show FILE --csv: exit %d, %v, %d records", code, err, len(recs))
	}
}

func TestResultsCompareCLI(t *testing.T) {
	dir, a, _, b := resultsDir(t)
	code, out, errOut := linerate(t, "results", "compare", "20261201", "2027", "--dir", dir)
	if code != 1 {
		t.Errorf("compare with a 3 %% drop: exit %d, want 1", code)
	}
	for _, want := range []string{"REGRESSION: throughput 3.00% lower", "driver: i40e → i40e 2.25.7", "regression: B is worse"} {
		if !strings.Contains(out, want) {
			t.Errorf("compare output lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(errOut, "regression: "+b.ID+" is worse than "+a.ID+" beyond 2% (64: throughput 3.00% lower)") {
		t.Errorf("compare stderr = %q", errOut)
	}
	code, out, _ = linerate(t, "results", "compare", a.ID, b.ID, "--dir", dir, "--threshold", "5%", "--json")
	var c results.Comparison
	if err := json.Unmarshal([]byte(out), &c); err != nil || code != 0 {
		t.Fatalf("compare --threshold 5%% --json: exit %d, %v\n%s", code, err, out)
	}
	if c.Regression || c.Threshold != 0.05 || len(c.Sizes) != 3 || len(c.Hosts) != 1 || c.Hosts[0].A != "r1" {
		t.Errorf("compare --json = %+v", c)
	}
	if code, _, _ = linerate(t, "results", "compare", a.ID, a.ID, "--dir", dir); code != 0 {
		t.Errorf("compare with itself: exit %d", code)
	}
}

func TestResultsReportBadInput(t *testing.T) {
	dir, a, _, _ := resultsDir(t)
	v2 := filepath.Join(t.TempDir(), "future.json")
	if err := os.WriteFile(v2, []byte(`{"schema": "linerate.result/v2", "id": "future"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"results", "show", "2026", "--dir", dir}, `"2026" matches 2 results`},
		{[]string{"results", "show", "1999", "--dir", dir}, "list them with: linerate results list --dir " + dir},
		{[]string{"results", "show", v2}, "this linerate reads version 1"},
		{[]string{"results", "show", a.ID, "--dir", dir, "--json", "--csv"}, "choose one"},
		{[]string{"results", "show", "--dir", dir}, "want ID, got 0"},
		{[]string{"results", "list", "--dir", filepath.Join(dir, "nope")}, "does not exist"},
		{[]string{"results", "compare", a.ID, "--dir", dir}, "want A B, got 1"},
		{[]string{"results", "compare", a.ID, a.ID, "--dir", dir, "--threshold", "5"}, "want a percentage"},
		{[]string{"results", "compare", a.ID, a.ID, "--dir", dir, "--threshold", "-1%"}, "want a percentage"},
		{[]string{"results", "frobnicate"}, "valid: compare, list, show"},
		{[]string{"report", a.ID, "--dir", dir, "-o", filepath.Join(t.TempDir(), "r.pdf")}, "give --format html|csv|json|table"},
		{[]string{"report", a.ID, "--dir", dir, "--format", "xml"}, "valid formats are html, csv, json, table"},
		{[]string{"report", a.ID, "--dir", dir, "-o", filepath.Join(dir, "no", "r.html")}, "does not exist"},
		{[]string{"report", "nope", "--dir", dir, "-o", filepath.Join(t.TempDir(), "r.html")}, "no such result"},
	}
	for _, c := range cases {
		code, _, errOut := linerate(t, c.args...)
		if code != 2 || !strings.Contains(errOut, c.want) {
			t.Errorf("linerate %s: exit %d, stderr %q; want exit 2 saying %q", strings.Join(c.args, " "), code, errOut, c.want)
		}
	}
}

func TestResultsThreshold(t *testing.T) {
	for in, want := range map[string]float64{"2%": 0.02, "0.5%": 0.005, "0.02": 0.02, " 10 % ": 0.1, "0": 1e-12, "0%": 1e-12} {
		got, err := parseThreshold("--threshold", in)
		if err != nil || got < want*(1-1e-12) || got > want*(1+1e-12) {
			t.Errorf("parseThreshold(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "2", "100%", "1", "-0.1", "two", "%"} {
		if _, err := parseThreshold("--threshold", in); err == nil {
			t.Errorf("parseThreshold(%q) accepted", in)
		}
	}
}

func TestReportCLI(t *testing.T) {
	dir, a, run, _ := resultsDir(t)
	out := t.TempDir()
	for _, c := range []struct {
		file, format, want string
	}{
		{"r.html", "", `data-series="throughput-mpps"`},
		{"r.csv", "", strings.Join(report.CSVHeader, ",")},
		{"r.json", "", `"schema": "linerate.result/v1"`},
		{"r.txt", "", "SIZE"},
		{"r.out", "html", "<!DOCTYPE html>"},
	} {
		path := filepath.Join(out, c.file)
		args := []string{"report", a.ID[:12], "--dir", dir, "-o", path}
		if c.format != "" {
			args = append(args, "--format", c.format)
		}
		code, stdout, errOut := linerate(t, args...)
		if code != 0 || stdout != "" {
			t.Fatalf("linerate %s: exit %d, stdout %q, stderr %s", strings.Join(args, " "), code, stdout, errOut)
		}
		b, err := os.ReadFile(path)
		if err != nil || !strings.Contains(string(b), c.want) {
			t.Errorf("%s: %v; does not contain %q", c.file, err, c.want)
		}
	}
	ents, _ := os.ReadDir(out)
	if len(ents) != 5 {
		t.Errorf("report left %d files, want the 5 reports only", len(ents))
	}
	// No -o: standard output, a table unless --format says otherwise.
	code, stdout, _ := linerate(t, "report", run.ID, "--dir", dir)
	if code != 0 || !strings.HasPrefix(stdout, "run "+run.ID) {
		t.Errorf("report to stdout: exit %d\n%s", code, stdout)
	}
	code, stdout, _ = linerate(t, "report", run.ID, "--dir", dir, "-o", "-", "--format", "html")
	if code != 0 || !strings.Contains(stdout, `data-series="loss-512"`) {
		t.Errorf("report -o - --format html: exit %d", code)
	}
}
