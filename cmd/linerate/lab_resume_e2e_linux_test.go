//go:build linux && traffic

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/linerate/linerate/coordinator/results"
	"github.com/linerate/linerate/internal/lab"
	"github.com/linerate/linerate/internal/netns/nstest"
)

// TestLabCampaignKilledAndResumed: `lab campaign` killed with SIGKILL
// after some trials keeps them, stored as running and read as
// interrupted (its pid is gone); `lab campaign --resume ID` in a new lab
// of the same flags replays them, runs the rest, and ends ok with the
// shaping rate found for every size, in the same document.
func TestLabCampaignKilledAndResumed(t *testing.T) {
	nstest.SkipUnlessRoot(t)
	bin := buildBinary(t)
	name := fmt.Sprintf("k%d", os.Getpid()%10000)
	dir := t.TempDir()
	const shape = 20e6
	labFlags := []string{"--name", name, "--senders", "1", "--receivers", "1", "--shape", "20mbit", "--results-dir", dir, "--log-level", "warn"}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	t.Cleanup(func() { exec.Command(bin, "lab", "down", "--name", name).Run() })

	cmd := exec.CommandContext(ctx, bin, append([]string{"lab", "campaign", "--sizes", "64,1518", "--search", "rfc2544",
		"--trial-duration", "1s", "--max-rate", "150%"}, labFlags...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Killed outright once three trials are stored.
	var id string
	for deadline := time.Now().Add(4 * time.Minute); ; time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("no campaign with 3 trials stored in time\n%s", stderr.String())
		}
		files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
		if len(files) == 1 {
			if d, err := results.ReadFile(files[0]); err == nil && len(d.Trials) >= 3 {
				id = d.ID
				break
			}
		}
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	kept, err := results.ReadFile(filepath.Join(dir, id+".json"))
	if err != nil || kept.Status != results.StatusRunning || kept.Writer == nil || kept.Writer.PID != cmd.Process.Pid {
		t.Fatalf("after SIGKILL the file holds %v: %+v", err, kept)
	}
	k := len(kept.Trials)
	out, err := exec.Command(bin, "results", "list", "--dir", dir, "--json").Output()
	var entries []results.Entry
	if jerr := json.Unmarshal(out, &entries); err != nil || jerr != nil || len(entries) != 1 || entries[0].Status != results.StatusInterrupted {
		t.Fatalf("results list: %v %v %+v", err, jerr, entries)
	}
	// The killed campaign's lab is left (nothing ran its teardown).
	if out, err := exec.Command(bin, "lab", "down", "--name", name).CombinedOutput(); err != nil {
		t.Fatalf("lab down: %v\n%s", err, out)
	}

	res := exec.CommandContext(ctx, bin, append([]string{"lab", "campaign", "--resume", id[:12], "--json"}, labFlags...)...)
	var stdout strings.Builder
	stderr.Reset()
	res.Stdout, res.Stderr = &stdout, &stderr
	err = res.Run()
	doc, derr := results.Decode(strings.NewReader(stdout.String()))
	if err != nil || derr != nil {
		t.Fatalf("lab campaign --resume: %v / %v\n%s\n%s", err, derr, stdout.String(), stderr.String())
	}
	assertNoLab(t, name, lab.DefaultDir(name))
	if doc.ID != id || doc.Status != "ok" || doc.Resumed != 1 || len(doc.Summary) != 2 || len(doc.Trials) <= k {
		t.Fatalf("resumed %s: %s, resumed %d, %d sizes, %d trials (%d before)", doc.ID, doc.Status, doc.Resumed, len(doc.Summary), len(doc.Trials), k)
	}
	for i := range k {
		if a, b := kept.Trials[i], doc.Trials[i]; a.OfferedPPS != b.OfferedPPS || a.Sent != b.Sent || a.RunID != b.RunID {
			t.Errorf("trial %d changed on resume: %+v → %+v", i+1, a, b)
		}
	}
	for _, s := range doc.Summary {
		want := shape / 8 / float64(s.Size-4)
		if s.ThroughputPPS < 0.95*want || s.ThroughputPPS > 1.05*want {
			t.Errorf("%d B: throughput %.0f pps, shaping rate %.0f pps (%d trials)", s.Size, s.ThroughputPPS, want, s.Trials)
		}
	}
	stored, err := results.NewStore(dir).Load(id)
	if err != nil || stored.Status != "ok" || len(stored.Trials) != len(doc.Trials) {
		t.Errorf("stored after resume: %v %+v", err, stored)
	}
	t.Logf("killed after %d trials, %d in all: %+v", k, len(doc.Trials), doc.Summary)
}
