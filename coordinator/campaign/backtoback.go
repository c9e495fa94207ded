package campaign

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/linerate/linerate/coordinator/results"
	"github.com/linerate/linerate/coordinator/search"
)

// PhaseBackToBack is the phase of RFC 2544's back-to-back bursts.
const PhaseBackToBack = "back-to-back"

// backToBack runs RFC 2544's back-to-back frames test of one size when
// the spec asks for it (section 26.4) and records it in res: each trial
// a search by burst length (search.BackToBack, from the previous
// trial's answer on), every burst a trial of the campaign.
func (c *campaignRun) backToBack(ctx context.Context, size int, res *results.SizeResult) error {
	bt := c.spec.BackToBack
	if bt == nil {
		return nil
	}
	rate := bt.Rate.PerFlow(c.line)
	// Each sender thread sends at least one frame of a burst (a thread
	// given none would send until stopped).
	minFrames := uint64(max(c.spec.Threads, 1))
	maxFrames := max(uint64(math.Ceil(rate*time.Duration(bt.Duration).Seconds())), minFrames)
	b := &results.BackToBack{RatePPS: rate, SearchedFrames: maxFrames, ResolutionFrames: bt.Resolution, Frames: []uint64{}}
	flows := uint64(len(c.flows))
	burst := func(ctx context.Context, n uint64, _ string) (search.Outcome, error) {
		d := time.Duration(float64(n) / rate * float64(time.Second))
		t, err := c.runTrial(ctx, size, rate, d, n, PhaseBackToBack, true)
		if err != nil {
			return search.Outcome{}, err
		}
		b.Bursts++
		o := search.Outcome{OfferedPPS: rate, AchievedPPS: t.AchievedPPS, Sent: t.Sent, Received: t.Received, Lost: t.Lost,
			LossRatio: t.LossRatio, GeneratorLimited: t.GeneratorLimited}
		switch {
		case t.Error != "":
			o.Err = errors.New(t.Error)
		case t.Sent != n*flows:
			// Not the burst asked for: no verdict on the path.
			o.Err = fmt.Errorf("the senders sent %d of the burst's %d frames", t.Sent, n*flows)
		}
		return o, nil
	}
	var hint uint64
	for k := range bt.Trials {
		n0 := len(c.doc.Trials)
		r, err := search.BackToBack(ctx, search.BurstOptions{MaxFrames: maxFrames, MinFrames: minFrames, Resolution: bt.Resolution, Hint: hint}, burst)
		if r != nil {
			// The search's verdicts are the record's.
			for i, x := range r.Bursts {
				if j := n0 + i; j < len(c.doc.Trials) {
					c.doc.Trials[j].Valid, c.doc.Trials[j].Passed = x.Valid, x.Passed
				}
			}
		}
		if err != nil {
			return fmt.Errorf("campaign: %s frames: back-to-back trial %d of %d: %w", c.label(size), k+1, bt.Trials, err)
		}
		b.Frames = append(b.Frames, r.Frames)
		// The burst that set the trial's value is back to back only if
		// its senders kept the rate (a burst of one frame has no rate).
		for _, x := range r.Bursts {
			if x.Passed && x.Frames == r.Frames && x.Frames > 1 && (b.AchievedPPS == 0 || x.Outcome.AchievedPPS < b.AchievedPPS) {
				b.AchievedPPS = x.Outcome.AchievedPPS
				b.GeneratorLimited = x.Outcome.GeneratorLimited
			}
		}
		hint = max(r.Frames, minFrames)
	}
	summarise(b, time.Duration(bt.Duration), minFrames)
	res.BackToBack = b
	return nil
}

// summarise fills b's figures from its trials' longest bursts (b.Frames,
// at least one): the mean (RFC 2544's value), the range, the mean
// burst's duration at the rate, and notes that say what the figures are
// when they are not a limit found: a lower bound (the longest burst
// searched, searched over d, passed), nothing carried (even minFrames
// lost frames), bursts the senders could not send back to back.
func summarise(b *results.BackToBack, d time.Duration, minFrames uint64) {
	b.MinFrames, b.MaxFrames = slices.Min(b.Frames), slices.Max(b.Frames)
	var sum float64
	for _, f := range b.Frames {
		sum += float64(f)
	}
	b.MeanFrames = sum / float64(len(b.Frames))
	if b.RatePPS > 0 {
		b.MeanSec = b.MeanFrames / b.RatePPS
	}
	b.LowerBound = b.MaxFrames >= b.SearchedFrames
	var notes []string
	if b.LowerBound {
		notes = append(notes, fmt.Sprintf("the path carried the longest burst searched, %d frames (%s at %.0f pps), with no loss: the back-to-back value is at least that; a longer trial_duration searches further", b.SearchedFrames, d, b.RatePPS))
	}
	if b.MaxFrames == 0 {
		notes = append(notes, fmt.Sprintf("every trial lost frames even of the shortest burst, %d frames", minFrames))
	}
	if b.GeneratorLimited {
		notes = append(notes, fmt.Sprintf("the senders sent a longest burst with no loss at %.0f pps, short of the %.0f pps asked: not back to back (a path that drains while a burst lasts may carry more of a slower one)", b.AchievedPPS, b.RatePPS))
	}
	b.Note = strings.Join(notes, "; ")
}
