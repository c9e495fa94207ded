//go:build linux && traffic

package e2e

import (
	"context"
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
		t.Logf("size %d: back-to-back %v frames (mean %.1f, %.3f ms at %d pps; the shaper holds %d at once), %d bursts; %s", s.Size, b.Frames, b.MeanFrames, 1e3*b.MeanSec, rate, fits, b.Bursts, b.Note)
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
