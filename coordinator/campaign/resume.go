package campaign

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/linerate/linerate/coordinator"
	"github.com/linerate/linerate/coordinator/results"
)

// Errors callers branch on.
var (
	// ErrStore: the document could not be saved (Runner.Save failed).
	ErrStore = errors.New("store the campaign")
	// ErrResume: the stored campaign cannot be continued (finished,
	// still running, not a campaign, or its trials do not fit the
	// campaign its spec describes now).
	ErrResume = errors.New("cannot resume the campaign")
)

// execute runs the resolved campaign, saving its document as it goes:
// running (with its writer) before the first trial, after every trial,
// and at its end. replay are the trials a resumed campaign answers from
// first.
func (c *campaignRun) execute(ctx context.Context, replay []results.Trial) (*results.Document, error) {
	c.doc.Status, c.doc.Writer, c.doc.Finished = results.StatusRunning, c.r.Writer, time.Time{}
	if replay != nil {
		// Saved once the stored trials are replayed (startTrial): a
		// replay that does not fit leaves the document as it was.
		c.replay, c.unsaved = replay, true
		c.doc.Trials, c.doc.Summary = []results.Trial{}, []results.SizeResult{}
	} else if err := c.save(); err != nil {
		return nil, fmt.Errorf("campaign: before the first trial: %w", err)
	}
	err := c.run(ctx)
	// A resume that stopped before it replayed every stored trial leaves
	// the stored document as it was.
	switch {
	case errors.Is(err, ErrResume):
		return nil, err
	case len(c.replay) > 0 && err != nil:
		return nil, fmt.Errorf("%w: stopped before its %d stored trials from trial %d on were replayed: %w", ErrResume, len(c.replay), c.replay[0].N, err)
	case len(c.replay) > 0:
		return nil, fmt.Errorf("%w: the campaign ended before its %d stored trials from trial %d on were replayed: its spec or the cluster's link speeds changed", ErrResume, len(c.replay), c.replay[0].N)
	}
	c.finish(ctx, err)
	if err := c.save(); err != nil {
		return c.doc, fmt.Errorf("campaign %s: at its end: %w", c.doc.ID, err)
	}
	return c.doc, nil
}

// startTrial is called before every trial that runs: the first one of
// a resumed campaign saves it as running, by this writer, with the
// trials replayed.
func (c *campaignRun) startTrial() error {
	if !c.unsaved {
		return nil
	}
	c.unsaved = false
	if err := c.save(); err != nil {
		return fmt.Errorf("campaign: before trial %d: %w", len(c.doc.Trials)+1, err)
	}
	return nil
}

// save records the hosts and the lab's truth seen so far and stores the
// document (when the Runner has Save).
func (c *campaignRun) save() error {
	d := c.doc
	if len(c.hosts) > 0 {
		d.Hosts = d.Hosts[:0]
		for _, h := range c.hosts {
			fp := results.FingerprintOf(h)
			fp.Version = c.r.Version
			d.Hosts = append(d.Hosts, fp)
		}
	}
	if c.lab != nil {
		d.Lab = c.lab
	}
	if c.r.Save == nil {
		return nil
	}
	if err := c.r.Save(d); err != nil {
		return fmt.Errorf("%w: %w", ErrStore, err)
	}
	return nil
}

// replayed answers a trial from the stored ones of a resumed campaign:
// the next stored trial, when it is the one asked for (size, phase,
// rate, duration). The searches and sweeps decide every rate from the
// trials before it, so replaying them in order brings the campaign to
// where it stopped, and it goes on as the uninterrupted run would have.
// A stored trial that is not the one asked for is ErrResume.
func (c *campaignRun) replayed(size int, rate float64, d time.Duration, burst uint64, phase string) (*results.Trial, bool, error) {
	if len(c.replay) == 0 {
		return nil, false, nil
	}
	t := c.replay[0]
	if t.Size != size || t.Phase != phase || t.Burst != burst || math.Abs(t.OfferedPPS-rate) > 1e-9*max(1, rate) || math.Abs(t.DurationSec-d.Seconds()) > 1e-9 {
		return nil, false, fmt.Errorf("%w: stored trial %d is %s frames, %s, %.0f pps for %s; the campaign now asks for %s, %s, %.0f pps for %s: its spec or the cluster's link speeds changed",
			ErrResume, t.N, c.label(t.Size), t.Phase, t.OfferedPPS, trialLength(t.DurationSec, t.Burst), c.label(size), phase, rate, trialLength(d.Seconds(), burst))
	}
	c.replay = c.replay[1:]
	t.N = len(c.doc.Trials) + 1
	c.doc.Trials = append(c.doc.Trials, t)
	if t.Passed && rate > c.best && burst == 0 {
		c.best = rate
	}
	c.log.Debug("trial replayed", "n", t.N, "size", size, "phase", phase, "offered_pps", int64(rate))
	return &t, true, nil
}

// trialLength is how long a trial was, in messages: "10s", or a
// burst's frames per flow.
func trialLength(sec float64, burst uint64) string {
	if burst > 0 {
		return fmt.Sprintf("a burst of %d frames", burst)
	}
	return fmt.Sprintf("%gs", sec)
}

// Resume continues the stored campaign doc, whose spec is spec (SpecOf):
// its trials are replayed in order — the frame sizes it finished are
// finished again without a trial, the search or sweep it was in reaches
// the point where it stopped — and the campaign goes on from there,
// saving into the same document (same id), which ends as the
// uninterrupted campaign's would have. The trial under way when it
// stopped was not stored and runs again, and so do trials at the end of
// the record that failed to run (an agent died). doc must not be
// finished (ok) or running; a document from Store.Load says
// "interrupted" once its writer is gone.
func (r *Runner) Resume(ctx context.Context, spec *Spec, doc *results.Document) (*results.Document, error) {
	if err := Resumable(doc); err != nil {
		return nil, err
	}
	log := r.Log
	if log == nil {
		log = hclog.NewNullLogger()
	}
	c := &campaignRun{r: r, spec: spec, log: log, doc: doc}
	if err := c.resolve(); err != nil {
		return nil, err
	}
	replay := doc.Trials
	for len(replay) > 0 && replay[len(replay)-1].Error != "" {
		replay = replay[:len(replay)-1]
	}
	if replay == nil {
		replay = []results.Trial{}
	}
	doc.Resumed++
	doc.Error = ""
	if doc.Hosts == nil {
		doc.Hosts = []results.Fingerprint{}
	}
	log.Info("resuming", "id", doc.ID, "trials", len(replay), "dropped", len(doc.Trials)-len(replay), "sizes_done", len(doc.Summary))
	return c.execute(ctx, replay)
}

// Resumable tells whether doc is a campaign that can be continued: one
// that did not finish (ok) and is not running (a document from
// Store.Load reads as interrupted once its writer is gone).
func Resumable(doc *results.Document) error {
	switch {
	case doc == nil:
		return fmt.Errorf("%w: no document", ErrResume)
	case doc.Kind != results.KindCampaign:
		return fmt.Errorf("%w: %s is a %s, not a campaign", ErrResume, doc.ID, doc.Kind)
	case doc.Status == coordinator.StatusOK:
		return fmt.Errorf("%w: %s finished (ok): nothing to continue", ErrResume, doc.ID)
	case doc.Status == results.StatusRunning:
		who := "no writer recorded"
		if doc.Writer != nil {
			who = doc.Writer.String()
		}
		return fmt.Errorf("%w: %s is still running (%s)", ErrResume, doc.ID, who)
	}
	return nil
}

// LoadForResume is the campaign id stored in store, and its spec, to
// continue (Resume): one that did not finish and is not running
// (Resumable). A campaign stored as running on another host (a shared
// directory) may still run there, which this host cannot tell: it is
// refused unless force says its process is gone, and is then taken as
// interrupted. Errors are the store's (results.ErrNotFound, …) or
// ErrResume.
func LoadForResume(store *results.Store, id string, force bool) (*results.Document, *Spec, error) {
	doc, err := store.Load(id)
	if err != nil {
		return nil, nil, err
	}
	if doc.Status == results.StatusRunning && doc.Writer != nil {
		// Load presents a running campaign whose writer is gone from this
		// host as interrupted: this one runs, or ran on another host.
		if _, known := store.Alive(*doc.Writer); !known && !force {
			return nil, nil, fmt.Errorf("%w: campaign %s is running on %s (%s): this host cannot tell whether it still runs; if it does not, give --force",
				ErrResume, doc.ID, doc.Writer.Host, doc.Writer)
		} else if !known {
			doc.Status = results.StatusInterrupted
		}
	}
	if err := Resumable(doc); err != nil {
		return nil, nil, err
	}
	spec, err := SpecOf(doc)
	if err != nil {
		return nil, nil, err
	}
	return doc, spec, nil
}

// SpecOf is the spec a stored campaign was run with (its "spec", the
// spec as given).
func SpecOf(doc *results.Document) (*Spec, error) {
	if len(doc.Spec) == 0 {
		return nil, fmt.Errorf("%w: %s holds no spec", ErrResume, doc.ID)
	}
	spec, err := Parse(doc.Spec)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: its stored spec: %w", ErrResume, doc.ID, err)
	}
	return spec, nil
}
