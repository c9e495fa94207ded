package results_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/linerate/linerate/coordinator/results"
	"github.com/linerate/linerate/coordinator/results/resultstest"
)

// sameJSON compares raw JSON (a spec) by content: the store indents it.
var sameJSON = cmp.Comparer(func(a, b json.RawMessage) bool {
	var ca, cb bytes.Buffer
	return json.Compact(&ca, a) == nil && json.Compact(&cb, b) == nil && bytes.Equal(ca.Bytes(), cb.Bytes())
})

// sameAddr compares addresses (a stream's) by value.
var sameAddr = cmp.Comparer(func(a, b netip.Addr) bool { return a == b })

func TestResultsStoreRoundTrip(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "results")
	st := results.NewStore(dir)
	camp := resultstest.Campaign()
	run := resultstest.Run()
	for _, d := range []*results.Document{camp, run} {
		path, err := st.Save(d)
		if err != nil {
			t.Fatalf("Save(%s): %v", d.ID, err)
		}
		if want := filepath.Join(dir, d.ID+".json"); path != want {
			t.Errorf("Save(%s) path = %s, want %s", d.ID, path, want)
		}
	}
	// Nothing but the two documents: no temporary files left.
	ents, _ := os.ReadDir(dir)
	if len(ents) != 2 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("directory holds %v, want the two documents only", names)
	}

	list, err := st.List()
	if err != nil {
		t.Fatal(err)
	}
	// Oldest first: the run is a day older than the campaign.
	if len(list) != 2 || list[0].ID != run.ID || list[1].ID != camp.ID {
		t.Fatalf("List = %+v, want run then campaign", list)
	}
	e := list[1]
	if e.Kind != "campaign" || e.Name != camp.Name || e.Status != "ok" || !e.Created.Equal(camp.Created) ||
		!cmp.Equal(e.Sizes, []string{"64", "512", "1518"}) || e.Problem != "" {
		t.Errorf("campaign entry = %+v", e)
	}
	if want := "64 24.18 Mpps (81.2%), 512 4.70 Mpps (100.0%), 1518 1.63 Mpps (100.0%)"; e.Summary != want {
		t.Errorf("summary = %q, want %q", e.Summary, want)
	}
	if !cmp.Equal(list[0].Sizes, []string{"512"}) {
		t.Errorf("run entry sizes = %v", list[0].Sizes)
	}

	for _, id := range []string{camp.ID, camp.ID[:10], "20261201", run.ID[:9]} {
		got, err := st.Load(id)
		if err != nil {
			t.Fatalf("Load(%q): %v", id, err)
		}
		want := camp
		if strings.HasPrefix(run.ID, id) {
			want = run
		}
		if diff := cmp.Diff(want, got, sameJSON, sameAddr); diff != "" {
			t.Errorf("Load(%q) differs from what was saved (-want +got):\n%s", id, diff)
		}
	}
}

func TestResultsLoadErrors(t *testing.T) {
	dir := t.TempDir()
	st := results.NewStore(dir)
	for _, id := range []string{"20261201T031500Z-aaaaaa", "20261201T031500Z-aabbbb", "20261202T000000Z-cccccc"} {
		d := resultstest.Campaign()
		d.ID = id
		if _, err := st.Save(d); err != nil {
			t.Fatal(err)
		}
	}
	_, err := st.Load("20261201T031500Z-aa")
	if !errors.Is(err, results.ErrAmbiguous) {
		t.Fatalf("ambiguous prefix: err = %v, want ErrAmbiguous", err)
	}
	for _, want := range []string{"20261201T031500Z-aaaaaa", "20261201T031500Z-aabbbb", "matches 2"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("ambiguous error %q does not name %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "cccccc") {
		t.Errorf("ambiguous error %q names a document that does not match", err)
	}
	_, err = st.Load("2025")
	if !errors.Is(err, results.ErrNotFound) || !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), "linerate results list") {
		t.Errorf("unknown id: err = %v, want ErrNotFound naming %s and how to list", err, dir)
	}
	_, err = results.NewStore(filepath.Join(dir, "nope")).List()
	if !errors.Is(err, results.ErrNoDir) || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("List of a missing directory: err = %v", err)
	}
}

func TestResultsSchemaRefused(t *testing.T) {
	dir := t.TempDir()
	st := results.NewStore(dir)
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("v2doc.json", `{"schema": "linerate.result/v2", "id": "v2doc", "kind": "campaign", "summary": {"a new": "shape"}}`)
	write("other.json", `{"schema": "someone.else/v1", "id": "other"}`)
	write("none.json", `{"id": "none"}`)
	write("broken.json", `{"schema": "linerate.result/v1", "id": `)
	write("minor.json", `{"schema": "linerate.result/v1.3", "id": "minor", "kind": "run", "status": "ok", "created": "2026-01-02T00:00:00Z", "summary": [], "a_new_field": 1}`)

	cases := []struct{ id, want string }{
		{"v2doc", "linerate.result/v2 is major version 2, this linerate reads version 1"},
		{"other", `"someone.else/v1" is not a linerate result schema`},
		{"none", `no "schema" field`},
	}
	for _, c := range cases {
		_, err := st.Load(c.id)
		if !errors.Is(err, results.ErrSchema) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Load(%s): err = %v, want ErrSchema saying %q", c.id, err, c.want)
		}
	}
	if _, err := st.Load("broken"); err == nil || errors.Is(err, results.ErrSchema) {
		t.Errorf("Load(broken): err = %v, want a JSON error", err)
	}
	if d, err := st.Load("minor"); err != nil || d.Kind != "run" {
		t.Errorf("Load(minor) = %+v, %v: a v1.x document must be read", d, err)
	}

	// The list shows what it could not read, and why.
	list, err := st.List()
	if err != nil {
		t.Fatal(err)
	}
	problems := map[string]string{}
	for _, e := range list {
		problems[e.ID] = e.Problem
	}
	if !strings.Contains(problems["v2doc"], "major version 2") || problems["minor"] != "" || problems["broken"] == "" {
		t.Errorf("list problems = %q", problems)
	}

	// Save refuses what could not be read back.
	for _, d := range []*results.Document{
		{ID: "x"},
		{Schema: results.Schema},
		{Schema: "linerate.result/v2", ID: "x"},
		{Schema: results.Schema, ID: "../escape"},
		{Schema: results.Schema, ID: ".hidden"},
	} {
		if _, err := st.Save(d); err == nil {
			t.Errorf("Save(schema %q id %q) succeeded", d.Schema, d.ID)
		}
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(dir), "escape.json")); err == nil {
		t.Error("Save wrote outside the directory")
	}
}

func TestResultsSaveReplaces(t *testing.T) {
	st := results.NewStore(t.TempDir())
	d := resultstest.Campaign()
	d.Status = "partial"
	if _, err := st.Save(d); err != nil {
		t.Fatal(err)
	}
	d.Status = "ok"
	if _, err := st.Save(d); err != nil {
		t.Fatal(err)
	}
	got, err := st.Load(d.ID)
	if err != nil || got.Status != "ok" {
		t.Errorf("Load after a second Save = %v, %v: want the second", got.Status, err)
	}
}

func TestResultsNewID(t *testing.T) {
	at := time.Date(2026, 12, 1, 4, 15, 0, 0, time.FixedZone("CET", 3600))
	a, b := results.NewID(at), results.NewID(at)
	if !strings.HasPrefix(a, "20261201T031500Z-") || len(a) != len("20261201T031500Z-3f9a1c") || a == b {
		t.Errorf("NewID = %q, %q", a, b)
	}
}
