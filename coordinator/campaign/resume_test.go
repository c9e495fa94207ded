package campaign

import (
	"bytes"
	"context"
	"errors"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/linerate/linerate/coordinator"
	"github.com/linerate/linerate/coordinator/results"
	"github.com/linerate/linerate/pktgen"
)

// gone is a process table in which every writer has died.
type gone struct{}

func (gone) Self() results.Writer              { return results.Writer{PID: 1, Host: "here"} }
func (gone) Alive(results.Writer) (bool, bool) { return false, true }

var resumeSpecs = map[string]string{
	"rfc2544, two sizes": `name: q
agents: {senders: [s1, s2], receivers: [r1, r2]}
frame_sizes: [64, 1518]
trial_duration: 100ms
between_trials: {pause: 1ms}
search: {resolution: 0.5%}
`,
	"ndr-pdr with a warm-up": `agents: {senders: [s1], receivers: [r2]}
frame_sizes: [64, 512]
trial_duration: 200ms
warmup: 50ms
between_trials: {pause: 1ms}
search: {type: ndr-pdr, initial_duration: 100ms, resolution: 1%}
`,
	"rfc2544, latency and back-to-back": `agents: {senders: [s1, s2], receivers: [r1, r2]}
frame_sizes: [1518]
trial_duration: 100ms
between_trials: {pause: 1ms}
latency: {trials: 2, trial_duration: 100ms}
back_to_back: {trials: 3, trial_duration: 10ms}
`,
	"sweep, two repetitions": `agents: {senders: [s1, s2], receivers: [r1, r2]}
frame_sizes: [512, 1518]
rates: [20%, 50%, 80%]
repetitions: 2
trial_duration: 100ms
between_trials: {pause: 1ms}
`,
}

// limit60 carries 60 % of the 1 Gb/s line rate.
func limit60(size int) float64 { return 0.6 * pktgen.LinePPS(1000, float64(size-4)) }

// buffer600k carries a burst of 600 kB (9375 64-byte frames, 395 of
// 1518 bytes).
func buffer600k(size int) uint64 { return uint64(600_000 / size) }

// stopping is a dut whose trial k+1 never ends as a trial: stop is
// called in its place (the campaign killed, or Ctrl-C).
type stopping struct {
	dut
	k    int
	stop func()
	mu   sync.Mutex
	n    int
}

func (s *stopping) run(ctx context.Context, spec coordinator.Spec) (*coordinator.Result, error) {
	s.mu.Lock()
	s.n++
	n := s.n
	s.mu.Unlock()
	if n == s.k+1 {
		s.stop()
	}
	return s.dut.run(ctx, spec)
}

// sameAnswer compares a resumed campaign's document with an uninterrupted one's.
func sameAnswer(t *testing.T, what string, got, want *results.Document) {
	t.Helper()
	enc := func(d *results.Document) string {
		var b bytes.Buffer
		results.Encode(&b, &results.Document{Schema: results.Schema, Summary: d.Summary, Trials: d.Trials, Hosts: d.Hosts, Status: d.Status})
		return b.String()
	}
	if g, w := enc(got), enc(want); g != w {
		t.Errorf("%s: the resumed campaign's answer differs from the uninterrupted one's:\n got %.2000s\nwant %.2000s", what, g, w)
	}
}

// TestKilledCampaignKeptAndResumed kills a campaign (its goroutine ends
// midway: no clean end, as with SIGKILL) and interrupts one (its context
// cancelled, as with Ctrl-C) after k trials (the first few k, the last
// few and every fourth between; the search's own test takes every k): the
// stored
// document holds the k trials and reads as interrupted, and a resume
// runs only the trials after k and ends with the uninterrupted answer.
func TestKilledCampaignKeptAndResumed(t *testing.T) {
	for name, y := range resumeSpecs {
		t.Run(name, func(t *testing.T) {
			whole := &dut{limit: limit60, buffer: buffer600k}
			want, _ := runCampaign(t, whole, y, nil)
			if want.Status != coordinator.StatusOK {
				t.Fatalf("uninterrupted: %s %s", want.Status, want.Error)
			}
			total := len(whole.specs)
			for _, k := range cuts(total) {
				for _, how := range []string{"killed", "interrupted"} {
					store := results.NewStore(t.TempDir())
					store.Processes = gone{}
					ctx, cancel := context.WithCancel(context.Background())
					d := &stopping{dut: dut{limit: limit60, buffer: buffer600k}, k: k}
					d.stop = cancel
					if how == "killed" {
						d.stop = runtime.Goexit
					}
					r := &Runner{Cluster: lab2x2, Run: d.run, Version: "test", Save: func(doc *results.Document) error {
						_, err := store.Save(doc)
						return err
					}, Writer: &results.Writer{PID: 4711, Host: "coord"}}
					done := make(chan *results.Document, 1)
					go func() {
						var doc *results.Document
						defer func() { done <- doc }()
						doc, _ = r.RunCampaign(ctx, parse(t, y), []byte(y))
					}()
					ran := <-done
					cancel()
					entries, err := store.List()
					if err != nil || len(entries) != 1 {
						t.Fatalf("%s after %d trials: stored %v, %v", how, k, entries, err)
					}
					id := entries[0].ID
					kept, err := store.Load(id)
					if err != nil {
						t.Fatal(err)
					}
					if kept.Status != results.StatusInterrupted || len(kept.Trials) != k || !strings.Contains(kept.Error, "linerate campaign resume "+id) {
						t.Fatalf("%s after %d trials: stored %s with %d trials: %s", how, k, kept.Status, len(kept.Trials), kept.Error)
					}
					if how == "interrupted" && (ran == nil || ran.Status != results.StatusInterrupted) {
						t.Errorf("interrupted after %d trials: the runner returned %+v", k, ran)
					}
					spec, err := SpecOf(kept)
					if err != nil {
						t.Fatal(err)
					}
					rest := &dut{limit: limit60, buffer: buffer600k}
					r2 := &Runner{Cluster: lab2x2, Run: rest.run, Version: "test", Save: r.Save, Writer: &results.Writer{PID: 4712, Host: "coord"}}
					got, err := r2.Resume(context.Background(), spec, kept)
					if err != nil {
						t.Fatalf("%s after %d trials: resume: %v", how, k, err)
					}
					if len(rest.specs) != total-k {
						t.Errorf("%s after %d trials: resume ran %d trials, want %d", how, k, len(rest.specs), total-k)
					}
					if got.ID != id || got.Resumed != 1 || got.Writer.PID != 4712 {
						t.Errorf("resumed into %s (want %s), resumed %d, writer %+v", got.ID, id, got.Resumed, got.Writer)
					}
					sameAnswer(t, how, got, want)
					stored, err := store.Load(id)
					if err != nil {
						t.Fatal(err)
					}
					sameAnswer(t, how+", as stored", stored, want)
				}
			}
		})
	}
}

// cuts are the numbers of trials after which a campaign of total is
// stopped: the first few, the last few, and some between.
func cuts(total int) []int {
	var ks []int
	for k := 0; k < total; k++ {
		if k < 3 || k >= total-2 || k%4 == 0 {
			ks = append(ks, k)
		}
	}
	return ks
}

// A resume refuses a finished or running campaign, and one whose spec
// asks for other trials than those stored, leaving the file as it was.
func TestResumeRefuses(t *testing.T) {
	y := resumeSpecs["rfc2544, two sizes"]
	store := results.NewStore(t.TempDir())
	store.Processes = gone{}
	save := func(doc *results.Document) error { _, err := store.Save(doc); return err }
	d := &stopping{dut: dut{limit: limit60}, k: 3}
	ctx, cancel := context.WithCancel(context.Background())
	d.stop = cancel
	r := &Runner{Cluster: lab2x2, Run: d.run, Save: save}
	doc, err := r.RunCampaign(ctx, parse(t, y), []byte(y))
	if err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(store.Path(doc.ID))

	other := &Runner{Cluster: lab2x2, Run: (&dut{limit: limit60}).run, Save: save,
		LineRate: fixedLine(1000)} // another line rate: other rates
	kept, _ := store.Load(doc.ID)
	if _, err := other.Resume(context.Background(), parse(t, y), kept); !errors.Is(err, ErrResume) || !strings.Contains(err.Error(), "stored trial 1") {
		t.Errorf("changed line rate: %v", err)
	}
	if after, _ := os.ReadFile(store.Path(doc.ID)); !bytes.Equal(before, after) {
		t.Error("a refused resume changed the stored document")
	}
	for _, status := range []string{coordinator.StatusOK, results.StatusRunning} {
		kept, _ := store.Load(doc.ID)
		kept.Status = status
		if _, err := r.Resume(context.Background(), parse(t, y), kept); !errors.Is(err, ErrResume) {
			t.Errorf("%s: %v", status, err)
		}
	}
}

// A save that fails stops the campaign, and says which file.
func TestCampaignStopsWhenSavingFails(t *testing.T) {
	y := resumeSpecs["rfc2544, two sizes"]
	d := &dut{limit: limit60}
	saves := 0
	r := &Runner{Cluster: lab2x2, Run: d.run, Save: func(*results.Document) error {
		if saves++; saves > 2 {
			return errors.New("write /results/x.json: no space left on device")
		}
		return nil
	}}
	doc, err := r.RunCampaign(context.Background(), parse(t, y), []byte(y))
	if !errors.Is(err, ErrStore) || !strings.Contains(err.Error(), "/results/x.json") {
		t.Fatalf("%v", err)
	}
	if doc == nil || doc.Status != coordinator.StatusFailed || len(d.specs) != 2 || !strings.Contains(doc.Error, "after trial 2") {
		t.Errorf("stopped after %d trials: %+v", len(d.specs), doc)
	}
}

// writers is a process table: pid → alive; a pid it lacks ran on
// another host.
type writers map[int]bool

func (writers) Self() results.Writer { return results.Writer{PID: 1, Host: "here"} }
func (w writers) Alive(wr results.Writer) (bool, bool) {
	alive, ok := w[wr.PID]
	return alive, ok
}

// A stored campaign is loaded for a resume unless it finished or still
// runs: here while its writer lives, on another host unless forced (then
// it is taken as interrupted).
func TestLoadForResume(t *testing.T) {
	y := resumeSpecs["sweep, two repetitions"]
	store := results.NewStore(t.TempDir())
	store.Processes = writers{10: true, 11: false}
	js, err := specJSON([]byte(y))
	if err != nil {
		t.Fatal(err)
	}
	save := func(id, status string, w *results.Writer) {
		t.Helper()
		d := &results.Document{Schema: results.Schema, ID: id, Kind: results.KindCampaign, Status: status, Writer: w, Spec: js}
		if _, err := store.Save(d); err != nil {
			t.Fatal(err)
		}
	}
	save("finished", coordinator.StatusOK, nil)
	save("alive", results.StatusRunning, &results.Writer{PID: 10, Host: "here"})
	save("gone", results.StatusRunning, &results.Writer{PID: 11, Host: "here"})
	save("elsewhere", results.StatusRunning, &results.Writer{PID: 12, Host: "there"})
	save("interrupted", results.StatusInterrupted, nil)
	if err := os.WriteFile(store.Path("nospec"), []byte(`{"schema":"`+results.Schema+`","id":"nospec","kind":"campaign","status":"failed"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		id    string
		force bool
		want  string // "" a resumable campaign
	}{
		{"finished", false, "finished (ok): nothing to continue"},
		{"alive", false, "still running (pid 10 on here"},
		{"alive", true, "still running (pid 10 on here"},
		{"elsewhere", false, "campaign elsewhere is running on there (pid 12 on there"},
		{"elsewhere", true, ""},
		{"gone", false, ""},
		{"interrupted", false, ""},
		{"nospec", false, "nospec holds no spec"},
	} {
		doc, spec, err := LoadForResume(store, tt.id, tt.force)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s (force %v): %v", tt.id, tt.force, err)
		case tt.want == "" && (doc.Status != results.StatusInterrupted || spec == nil || len(spec.Rates) != 3):
			t.Errorf("%s (force %v): %s, spec %+v; want it interrupted with its spec", tt.id, tt.force, doc.Status, spec)
		case tt.want != "" && (!errors.Is(err, ErrResume) || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s (force %v): %v, want ErrResume with %q", tt.id, tt.force, err, tt.want)
		}
	}
	if _, _, err := LoadForResume(store, "nosuch", false); !errors.Is(err, results.ErrNotFound) {
		t.Errorf("missing id: %v, want results.ErrNotFound", err)
	}
}
