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

	"github.com/linerate/linerate/internal/lab"
	"github.com/linerate/linerate/internal/netns/nstest"
)

// TestLabCampaign checks that an RFC 2544 search per frame size against a
// tbf-shaped switch port finds the shaping rate (tbf counts frames without
// FCS) within 5 %, that the result is stored and round-trips through
// results show and compare, and that the HTML report is written.
func TestLabCampaign(t *testing.T) {
	nstest.SkipUnlessRoot(t)
	bin := buildBinary(t)
	name := fmt.Sprintf("c%d", os.Getpid()%10000)
	dir, html := t.TempDir(), filepath.Join(t.TempDir(), "report.html")
	const shape = 20e6
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "lab", "campaign", "--name", name, "--senders", "1", "--receivers", "1",
		"--sizes", "64,512,1518", "--search", "rfc2544", "--shape", "20mbit", "--trial-duration", "2s", "--max-rate", "150%",
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
		want := shape / 8 / float64(s.Size-4)
		// Starting at 150 % of the shaper, the first trial loses: the
		// binary search has to find the rate.
		if s.ThroughputPPS < 0.95*want || s.ThroughputPPS > 1.05*want || s.Trials < 3 {
			t.Errorf("%d B: throughput %.0f pps, shaping rate %.0f pps (%d trials)", s.Size, s.ThroughputPPS, want, s.Trials)
		}
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
