package report_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/linerate/linerate/coordinator/report"
	"github.com/linerate/linerate/coordinator/results"
	"github.com/linerate/linerate/coordinator/results/resultstest"
)

// A host's note (its agent's IRQ plan wrapped 4 queues onto 2 CPUs) is
// said by every report of the run, and as a note, never a warning: the
// run table's note: line, the JSON's run.hosts[].notes, and the HTML
// report's IRQ maps, under that host alone, from the document as stored
// (the JSON read back, as `linerate report` reads it).
func TestReportHostNotes(t *testing.T) {
	const note = "4 queues of eth1 on 2 CPUs (cpu2: q0 q2, cpu3: q1 q3): more queues than usable local CPUs, so they wrap round-robin, several per CPU"
	doc := resultstest.Run()
	doc.Run.Hosts[0].Notes = []string{note}
	name := doc.Run.Hosts[0].Name

	var tbl bytes.Buffer
	if err := report.RunTable(&tbl, doc.Run); err != nil {
		t.Fatal(err)
	}
	if out := tbl.String(); !strings.Contains(out, "\nnote: "+name+": "+note+"\n") || strings.Count(out, "note: ") != 1 {
		t.Errorf("run table: want one note: line, %s's:\n%s", name, out)
	}

	var js bytes.Buffer
	if err := report.JSON(&js, doc); err != nil {
		t.Fatal(err)
	}
	var raw struct {
		Run struct {
			Hosts []struct {
				Name     string   `json:"name"`
				Notes    []string `json:"notes"`
				Warnings []string `json:"warnings"`
			} `json:"hosts"`
		} `json:"run"`
	}
	if err := json.Unmarshal(js.Bytes(), &raw); err != nil {
		t.Fatal(err)
	}
	for i, h := range raw.Run.Hosts {
		want := 0
		if i == 0 {
			want = 1
		}
		if len(h.Notes) != want || (want == 1 && h.Notes[0] != note) || len(h.Warnings) != 0 {
			t.Errorf("JSON host %s: notes %q warnings %q, want %d note%s and no warning", h.Name, h.Notes, h.Warnings, want, map[bool]string{true: " (" + note + ")"}[want == 1])
		}
	}

	stored, err := results.Decode(&js)
	if err != nil {
		t.Fatal(err)
	}
	root, _ := parseHTML(t, stored)
	maps := find(root, "section", map[string]string{"id": "irq-maps"})
	if len(maps) != 1 {
		t.Fatalf("%d IRQ map sections, want 1", len(maps))
	}
	all := find(root, "p", map[string]string{"class": "host-note"})
	mine := find(maps[0], "p", map[string]string{"class": "host-note", "data-host": name})
	if len(all) != 1 || len(mine) != 1 || text(mine[0]) != "note: "+note {
		t.Fatalf("HTML: %d host notes, %d of %s in the IRQ maps, want its one note %q", len(all), len(mine), name, note)
	}
	for _, w := range find(root, "p", map[string]string{"class": "warn"}) {
		if strings.Contains(text(w), "queues") {
			t.Errorf("HTML: the note is also a warning: %q", text(w))
		}
	}
}
