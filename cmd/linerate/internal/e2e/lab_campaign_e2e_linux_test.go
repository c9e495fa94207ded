//go:build linux && traffic

package e2e

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

	"github.com/linerate/linerate/cmd/linerate/internal/lab"
	"github.com/linerate/linerate/coordinator/campaign"
	"github.com/linerate/linerate/coordinator/results"
	"github.com/linerate/linerate/internal/netns/nstest"
)

// TestLabCampaign checks that an RFC 2544 search per frame size against a
// tbf-shaped switch port finds the shaping rate (tbf counts frames without
// FCS) within 5 %, that the result is stored and round-trips through
// results show and compare, and that the HTML report is written.
func TestLabCampaign(t *testing.T) {
	nstest.SkipUnlessRoot(t)
	bin := Binary(t)
	name := fmt.Sprintf("c%d", os.Getpid()%10000)
	dir, html := t.TempDir(), filepath.Join(t.TempDir(), "report.html")
	const shape = 20e6
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "lab", "campaign", "--name", name, "--senders", "1", "--receivers", "1",
		"--sizes", "64,512,1518", "--search", "rfc2544", "--shape", "20mbit", "--trial-duration", "1s", "--max-rate", "150%",
		"--results-dir", dir, "--html", html, "--json", "--log-level", "warn")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var doc struct {
		ID      string `json:"id"`
		Status  string `json:"status"`
		Summary []struct {
			Size          int     `json:"size"`
			ThroughputPPS float64 `json:"throughput_pps"`
			L1BPS         float64 `json:"l1_bps"`
			LineRatePct   float64 `json:"line_rate_pct"`
			LossRatio     float64 `json:"loss_ratio"`
			Trials        int     `json:"trials"`
		} `json:"summary"`
		Trials []json.RawMessage `json:"trials"`
	}
	if jerr := json.Unmarshal([]byte(stdout.String()), &doc); jerr != nil || err != nil {
		t.Fatalf("lab campaign: %v / %v\n%s\n%s", err, jerr, stdout.String(), stderr.String())
	}
	assertNoLab(t, name, lab.DefaultDir(name))
	if doc.Status != "ok" || len(doc.Summary) != 3 {
		t.Fatalf("status %s, %d sizes", doc.Status, len(doc.Summary))
	}
	total := 0
	for _, s := range doc.Summary {
		checkShaped(t, shape, s.Size, s.ThroughputPPS, s.Trials)
		total += s.Trials
	}
	if len(doc.Trials) != total {
		t.Errorf("%d trials recorded, summary counts %d", len(doc.Trials), total)
	}
	t.Logf("summary %+v", doc.Summary)
	show, err := exec.Command(bin, "results", "show", doc.ID, "--dir", dir, "--json").Output()
	if err != nil {
		t.Fatalf("results show: %v", err)
	}
	var again struct {
		ID      string            `json:"id"`
		Trials  []json.RawMessage `json:"trials"`
		Summary []json.RawMessage `json:"summary"`
	}
	if err := json.Unmarshal(show, &again); err != nil || again.ID != doc.ID || len(again.Trials) != len(doc.Trials) || len(again.Summary) != 3 {
		t.Errorf("results show: %v, id %s, %d trials", err, again.ID, len(again.Trials))
	}
	if out, err := exec.Command(bin, "results", "compare", doc.ID, doc.ID, "--dir", dir).CombinedOutput(); err != nil || !strings.Contains(string(out), "1518") {
		t.Errorf("results compare with itself: %v\n%s", err, out)
	}
	if b, err := os.ReadFile(html); err != nil || !strings.Contains(string(b), "<svg") {
		t.Errorf("HTML report: %v (%d bytes)", err, len(b))
	}
}

// checkShaped: a size's throughput behind a shaper of shape bit/s is the
// shaping rate within 5 % (tbf counts frames without FCS). Starting at
// 150 % of the shaper, the first trial loses: the binary search has to
// find the rate, in 3 trials at least.
func checkShaped(t *testing.T, shape float64, size int, throughput float64, trials int) {
	t.Helper()
	// Within -10 %/+5 %: where the host kernel's veth path does not push
	// back (6.18), a paced sender's bursts near the rate overflow the
	// shaper's queue now and then, and a zero-loss search settles a step
	// below it.
	checkShapedWithin(t, 0.90, shape, size, throughput, trials)
}

// checkShapedWithin fails t unless throughput is from low times the
// shaping rate of size-byte frames to 5 % over it, found in 3 trials or
// more.
func checkShapedWithin(t *testing.T, low, shape float64, size int, throughput float64, trials int) {
	t.Helper()
	want := shape / 8 / float64(size-4)
	if throughput < low*want || throughput > 1.05*want || trials < 3 {
		t.Errorf("%d B: throughput %.0f pps, shaping rate %.0f pps (%d trials): want %.0f %% to 105 %% of it", size, throughput, want, trials, 100*low)
	}
}

// TestLabCampaignKilledAndResumed: `lab campaign --search ndr-pdr`
// killed with SIGKILL after some trials keeps them, stored as running and
// read as interrupted (its pid is gone); `lab campaign --resume ID` in a
// new lab of the same flags replays them, runs the rest, and ends ok in
// the same document, with every size's NDR at the shaping rate (as
// checkShaped bounds a zero-loss search) and its PDR from the NDR to
// 5 % over the shaping rate less the PDR's loss goal.
func TestLabCampaignKilledAndResumed(t *testing.T) {
	nstest.SkipUnlessRoot(t)
	bin := Binary(t)
	name := fmt.Sprintf("k%d", os.Getpid()%10000)
	dir := t.TempDir()
	const shape = 20e6
	labFlags := []string{"--name", name, "--senders", "1", "--receivers", "1", "--shape", "20mbit", "--results-dir", dir, "--log-level", "warn"}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	t.Cleanup(func() { exec.Command(bin, "lab", "down", "--name", name).Run() })

	cmd := exec.CommandContext(ctx, bin, append([]string{"lab", "campaign", "--sizes", "64,1518", "--search", "ndr-pdr",
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
		checkShaped(t, shape, s.Size, s.NDRPPS, s.Trials)
		if want := shape / 8 / float64(s.Size-4); s.PDRPPS < s.NDRPPS || s.PDRPPS > 1.05*want/(1-s.PDRGoal) {
			t.Errorf("%d B: NDR %.0f pps, PDR %.0f pps (goal %g): want the PDR from the NDR to 5 %% over the shaping rate %.0f pps less the goal", s.Size, s.NDRPPS, s.PDRPPS, s.PDRGoal, want)
		}
	}
	stored, err := results.NewStore(dir).Load(id)
	if err != nil || stored.Status != "ok" || len(stored.Trials) != len(doc.Trials) {
		t.Errorf("stored after resume: %v %+v", err, stored)
	}
	t.Logf("killed after %d trials, %d in all: %+v", k, len(doc.Trials), doc.Summary)
}

// TestLabCampaignBackToBack: RFC 2544's back-to-back test in a lab
// whose switch port toward the receiver is a tbf shaper of a known
// bucket and queue (lab.ShaperBuffer), against which the longest burst
// with no loss is known, and in a lab without one, whose path carries
// the longest burst searched.
//
// The shaped truth, for frames of L bytes without FCS (as tbf counts
// them), a bucket of b and a queue of q bytes, and a rate of R frames a
// second: after an idle time (the pause and drain between bursts refill
// the bucket) the first floor(b/L) frames of a burst pass at once and
// the queue holds floor(q/L) more, whatever the pattern of the burst's
// arrivals, so every trial's value is at least floor(b/L) + floor(q/L).
// While the burst lasts the shaper drains R a second: a burst whose
// frames came over a span T has lost nothing only if it is at most
// floor(b/L) + floor(q/L) + 1 + R·T frames (the 1: the frame the
// shaper's clock lets through as the last arrives). T is the burst's own
// span from its first frame to its last, which the sender's rate over
// the burst is its frames over (pktgen.Rate) and a sender that stalled
// mid-burst lengthens, so the bound holds for a sender that fell behind
// too. Other frames
// through the port (none are sent on the lab's data links during a run)
// would only lower the value; the test allows none.
func TestLabCampaignBackToBack(t *testing.T) {
	nstest.SkipUnlessRoot(t)
	bin := Binary(t)
	const shape = 2_000_000 // bit/s: 4167 64-byte frames a second
	const rate = 100_000    // the bursts' pps: 24 times the shaper's
	bucket, queue := lab.ShaperBuffer(shape)
	spec := `agents: {senders: [s1], receivers: [r1]}
frame_sizes: [64, 1518]
search: {type: none}
rates: [2000]
trial_duration: 1s
drain: 300ms
between_trials: {pause: 100ms}
back_to_back: {trials: 2, trial_duration: 10ms, rate: 100kpps}
`
	doc := labCampaignSpec(t, bin, spec, "--shape", "2mbit")
	for _, s := range doc.Summary {
		b := s.BackToBack
		if b == nil || len(b.Frames) != 2 || b.RatePPS != rate || b.SearchedFrames != 1000 {
			t.Fatalf("size %d: back-to-back %+v", s.Size, b)
		}
		frame := uint64(s.Size - 4)
		fits := bucket/frame + queue/frame
		drain := float64(shape) / 8 / float64(frame) // frames a second
		for k, n := range b.Frames {
			// The span of the trial's longest burst with no loss, from its
			// sender's rate over it.
			achieved := 0.0
			for _, tr := range doc.Trials {
				if tr.Size == s.Size && tr.Phase == campaign.PhaseBackToBack && tr.Burst == n && tr.Passed {
					achieved = tr.AchievedPPS
				}
			}
			if achieved <= 0 {
				t.Fatalf("size %d trial %d: no passed burst of %d frames recorded", s.Size, k+1, n)
			}
			span := float64(n) / achieved
			most := float64(fits) + 1 + drain*span
			if n < fits || float64(n) > most {
				t.Errorf("size %d trial %d: %d frames with no loss; the shaper (bucket %d B, queue %d B, %.0f frames/s) holds %d at once and at most %.1f over the burst's %.2f ms at %.0f pps",
					s.Size, k+1, n, bucket, queue, drain, fits, most, 1e3*span, achieved)
			}
		}
		if b.LowerBound || b.MeanFrames != float64(b.Frames[0]+b.Frames[1])/2 {
			t.Errorf("size %d: %+v", s.Size, b)
		}
		t.Logf("size %d: back-to-back %v frames (mean %.1f, %.3f ms at %d pps, sent at %.0f pps; the shaper holds %d at once), %d bursts; %s", s.Size, b.Frames, b.MeanFrames, 1e3*b.MeanSec, rate, b.AchievedPPS, fits, b.Bursts, b.Note)
	}

	// Without a shaper the path carries the longest burst searched: the
	// value is a lower bound, found in one burst a trial.
	doc = labCampaignSpec(t, bin, strings.Replace(spec, "frame_sizes: [64, 1518]", "frame_sizes: [64]", 1))
	b := doc.Summary[0].BackToBack
	if b == nil || !b.LowerBound || b.MinFrames != 1000 || b.Bursts != 2 || !strings.Contains(b.Note, "at least") {
		t.Errorf("unshaped: back-to-back %+v, want at least the 1000 frames searched, in 2 bursts", b)
	}
}

// labCampaignSpec runs `lab campaign` of spec (YAML) in a lab of one
// sender and one receiver built with flags, and returns its document,
// the lab gone.
func labCampaignSpec(t *testing.T, bin, spec string, flags ...string) *results.Document {
	t.Helper()
	name := fmt.Sprintf("b%d", os.Getpid()%10000)
	dir := t.TempDir()
	file := filepath.Join(dir, "b2b.yaml")
	if err := os.WriteFile(file, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	args := append([]string{"lab", "campaign", file, "--name", name, "--senders", "1", "--receivers", "1",
		"--results-dir", dir, "--json", "--log-level", "warn"}, flags...)
	cmd := exec.CommandContext(ctx, bin, args...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	doc, derr := results.Decode(strings.NewReader(stdout.String()))
	if err != nil || derr != nil {
		t.Fatalf("lab campaign %v: %v / %v\n%s\n%s", flags, err, derr, stdout.String(), stderr.String())
	}
	assertNoLab(t, name, lab.DefaultDir(name))
	if doc.Status != "ok" {
		t.Fatalf("lab campaign %v: %s: %s", flags, doc.Status, doc.Error)
	}
	return doc
}
