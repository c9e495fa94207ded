package campaign

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/linerate/linerate/coordinator"
	"github.com/linerate/linerate/coordinator/results"
)

// burstsOf are a size's back-to-back bursts in the record.
func burstsOf(doc *results.Document, size int) []results.Trial {
	var out []results.Trial
	for _, tr := range doc.Trials {
		if tr.Size == size && tr.Phase == PhaseBackToBack {
			out = append(out, tr)
		}
	}
	return out
}

// RFC 2544's back-to-back test (26.4) on a device whose buffer holds a
// known burst per size: every trial finds it to the frame, the mean,
// range and duration are its, each burst is a campaign trial of its
// frames at the line rate, and a size whose buffer holds more than the
// longest burst searched is reported as at least that, a lower bound.
func TestCampaignBackToBack(t *testing.T) {
	const line = 100_000 // pps per flow: 10 ms is 1000 frames
	buf := map[int]uint64{64: 777, 512: 5000, 1518: 0}
	d := &dut{limit: func(int) float64 { return line }, buffer: func(size int) uint64 { return buf[size] }}
	doc, _ := runCampaign(t, d, `name: q
agents: {senders: [s1, s2], receivers: [r1, r2]}
frame_sizes: [64, 512, 1518]
trial_duration: 100ms
between_trials: {pause: 1ms}
back_to_back: {trials: 3, trial_duration: 10ms}
`, fixedLine(line))
	if doc.Status != coordinator.StatusOK || len(doc.Summary) != 3 {
		t.Fatalf("doc %s: %s", doc.Status, doc.Error)
	}
	for _, s := range doc.Summary {
		b := s.BackToBack
		if b == nil {
			t.Fatalf("size %d: no back-to-back result", s.Size)
		}
		want := min(buf[s.Size], 1000)
		if b.RatePPS != line || b.SearchedFrames != 1000 || b.ResolutionFrames != 1 || len(b.Frames) != 3 || b.MeanFrames != float64(want) ||
			b.MinFrames != want || b.MaxFrames != want || math.Abs(b.MeanSec-float64(want)/line) > 1e-12 {
			t.Errorf("size %d: %+v, want %d frames in each of 3 trials at %d pps", s.Size, b, want, line)
		}
		if lower := buf[s.Size] >= 1000; b.LowerBound != lower || strings.Contains(b.Note, "at least") != lower {
			t.Errorf("size %d: lower bound %v (%q), want %v", s.Size, b.LowerBound, b.Note, lower)
		}
		if buf[s.Size] == 0 && !strings.Contains(b.Note, "even of the shortest burst, 1 frames") {
			t.Errorf("size %d: a path that carries no burst: %q", s.Size, b.Note)
		}
		bursts := burstsOf(doc, s.Size)
		if len(bursts) != b.Bursts || len(bursts) == 0 {
			t.Errorf("size %d: %d bursts recorded, the result counts %d", s.Size, len(bursts), b.Bursts)
		}
		for _, tr := range bursts {
			passed := tr.Burst <= buf[s.Size]
			if tr.OfferedPPS != line || tr.DurationSec != float64(tr.Burst)/line || !tr.Valid || tr.Passed != passed || tr.Sent != 2*tr.Burst {
				t.Errorf("size %d: burst %+v, want %d frames a flow at %d pps, passed %v", s.Size, tr, tr.Burst, line, passed)
			}
		}
		// After the first trial's search, a steady device takes two
		// bursts a trial (its answer, a frame more), or one at an end.
		if first := len(bursts) - 2*2; buf[s.Size] > 1 && buf[s.Size] < 1000 && first > 13 {
			t.Errorf("size %d: %d bursts, %d in the first trial", s.Size, len(bursts), first)
		}
	}
	// Every burst was one run of Count frames per flow at the line rate.
	n := 0
	for _, sp := range d.specs {
		if isBurst(sp) {
			n++
			if sp.Duration != 0 || sp.Rate != line {
				t.Errorf("burst run %+v", sp)
			}
		}
	}
	if want := len(burstsOf(doc, 64)) + len(burstsOf(doc, 512)) + len(burstsOf(doc, 1518)); n != want {
		t.Errorf("%d burst runs, %d recorded", n, want)
	}
}

// moody is a buffer whose size changes once it has been measured: after
// a burst of limits[0] passed and one a frame longer lost frames, the
// next limit holds. A search to the frame ends exactly then, so each
// back-to-back trial meets the next limit.
type moody struct {
	limits     []uint64
	pass, fail bool
}

func (m *moody) buffer(int) uint64 { return m.limits[0] }

func (m *moody) saw(burst uint64) {
	switch {
	case burst == m.limits[0]:
		m.pass = true
	case burst == m.limits[0]+1:
		m.fail = true
	}
	if m.pass && m.fail && len(m.limits) > 1 {
		m.limits, m.pass, m.fail = m.limits[1:], false, false
	}
}

// A device whose buffer differs from trial to trial: each trial's value
// is its own, the mean is RFC 2544's figure, the range is theirs.
func TestCampaignBackToBackVaries(t *testing.T) {
	const line = 100_000
	m := &moody{limits: []uint64{300, 500, 200, 420}}
	d := &dut{limit: func(int) float64 { return line }, buffer: m.buffer}
	run := d.run
	r := &Runner{Cluster: lab2x2, LineRate: fixedLine(line), Run: func(ctx context.Context, s coordinator.Spec) (*coordinator.Result, error) {
		res, err := run(ctx, s)
		if isBurst(s) {
			m.saw(s.Count)
		}
		return res, err
	}}
	y := `agents: {senders: [s1], receivers: [r1]}
frame_sizes: [64]
search: {type: none}
rates: [50%]
trial_duration: 100ms
between_trials: {pause: 1ms}
back_to_back: {trials: 4, trial_duration: 10ms}
`
	doc, err := r.RunCampaign(context.Background(), parse(t, y), []byte(y))
	if err != nil || doc.Status != coordinator.StatusOK {
		t.Fatalf("%v %+v", err, doc)
	}
	b := doc.Summary[0].BackToBack
	if got := b.Frames; len(got) != 4 || got[0] != 300 || got[1] != 500 || got[2] != 200 || got[3] != 420 {
		t.Fatalf("trials found %v, want [300 500 200 420]", got)
	}
	if b.MeanFrames != 355 || b.MinFrames != 200 || b.MaxFrames != 500 || b.MeanSec != 355.0/line || b.LowerBound {
		t.Errorf("%+v: want mean 355, min 200, max 500, %g s", b, 355.0/line)
	}
}

// The summary of a test's trials: mean, range, duration, and notes that
// say when the figures are a lower bound or when nothing was carried.
func TestSummariseBackToBack(t *testing.T) {
	b := &results.BackToBack{RatePPS: 1000, SearchedFrames: 2000, Frames: []uint64{10, 20, 30, 2000}}
	summarise(b, 2*time.Second, 1)
	if b.MeanFrames != 515 || b.MinFrames != 10 || b.MaxFrames != 2000 || b.MeanSec != 0.515 || !b.LowerBound ||
		!strings.Contains(b.Note, "longest burst searched, 2000 frames (2s at 1000 pps), with no loss: the back-to-back value is at least that") {
		t.Errorf("%+v", b)
	}
	b = &results.BackToBack{RatePPS: 1000, SearchedFrames: 2000, Frames: []uint64{0, 0}, GeneratorLimited: true, AchievedPPS: 700}
	summarise(b, 2*time.Second, 4)
	if b.MeanFrames != 0 || b.LowerBound || !strings.Contains(b.Note, "even of the shortest burst, 4 frames") || !strings.Contains(b.Note, "at 700 pps, short of the 1000 pps asked: not back to back") {
		t.Errorf("%+v", b)
	}
}

// Senders slower than the bursts' rate are said, with the rate they
// reached over the bursts that set the values.
func TestCampaignBackToBackGeneratorLimited(t *testing.T) {
	const line = 100_000
	d := &dut{limit: func(int) float64 { return line }, gen: 60_000, buffer: func(int) uint64 { return 300 }}
	doc, _ := runCampaign(t, d, `agents: {senders: [s1], receivers: [r1]}
frame_sizes: [64]
search: {type: none}
rates: [1000]
trial_duration: 100ms
between_trials: {pause: 1ms}
back_to_back: {trials: 2, trial_duration: 10ms}
`, fixedLine(line))
	b := doc.Summary[0].BackToBack
	if b == nil || b.MeanFrames != 300 || !b.GeneratorLimited || b.AchievedPPS != 60_000 || !strings.Contains(b.Note, "at 60000 pps, short of the 100000 pps asked") {
		t.Errorf("%+v", b)
	}
}
