package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/linerate/linerate/coordinator"
	"github.com/linerate/linerate/coordinator/campaign"
	"github.com/linerate/linerate/coordinator/report"
	"github.com/linerate/linerate/coordinator/results"
	"github.com/linerate/linerate/internal/safefile"
)

// outputFlags are where a run's or a campaign's record and reports go.
type outputFlags struct {
	dir              string
	html             string
	json, jsonStream bool
}

// register adds the flags; events says what --json-stream prints before
// the result.
func (o *outputFlags) register(fl *pflag.FlagSet, events string) {
	fl.StringVar(&o.dir, "results-dir", results.DefaultDir, "where the result document is stored (empty: not stored)")
	fl.StringVar(&o.html, "html", "", "also write the HTML report to this file (-: standard output; only a regular file is replaced)")
	fl.BoolVar(&o.json, "json", false, "print the result as JSON")
	fl.BoolVar(&o.jsonStream, "json-stream", false, "print NDJSON "+events+", then the result as the last line")
}

// check refuses, before anything runs, an --html file that cannot be
// written (its directory does not exist, or it is not a regular file):
// a long campaign must not end unable to write it.
func (o *outputFlags) check() error {
	if o.html == "" {
		return nil
	}
	if err := safefile.Check(o.html); err != nil {
		return usagef("--html %v", err)
	}
	return nil
}

func (a *app) campaignCommand() *cobra.Command {
	cmd := group(&cobra.Command{Use: "campaign", Short: "Campaigns: frame-size sweeps and throughput searches across the fleet"})
	cf := &clusterFlags{}
	out := &outputFlags{}
	run := &cobra.Command{
		Use:   "run SPEC.yaml --join HOST:PORT (--tls-dir DIR | --insecure) [--json | --json-stream] [--html FILE]",
		Short: "Run a campaign spec: every frame size searched or swept, every trial recorded",
		Long: `campaign run reads a YAML spec (agents, pattern, frame sizes, threads, rates or
a throughput search, trial duration, repetitions, warm-up, drain, pause
between trials), runs one coordinator run per trial, stores the campaign as
one JSON document in --results-dir and prints the summary per frame size.
Errors in the spec name the line and the field. The document is saved
when the campaign starts and after every trial (atomically), as
"running"; Ctrl-C, SIGTERM or SIGHUP stops it as "interrupted", and a killed
one keeps every finished trial: continue either with 'campaign resume
ID'. Exit status 1 when the campaign did not end ok or could not be
stored (the error names the file).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return a.campaignRun(cmd.Context(), args[0], cf, out) },
	}
	cf.register(run, a)
	out.register(run.Flags(), "progress events")
	cmd.AddCommand(run, a.campaignResumeCommand())
	return cmd
}

func (a *app) campaignResumeCommand() *cobra.Command {
	cf := &clusterFlags{}
	out := &outputFlags{}
	var force bool
	cmd := &cobra.Command{
		Use:   "resume ID --join HOST:PORT (--tls-dir DIR | --insecure) [--json | --json-stream] [--html FILE]",
		Short: "Continue an interrupted campaign from its stored trials",
		Long: `campaign resume continues the campaign ID stored in --results-dir that did not
finish: interrupted (Ctrl-C, SIGTERM, SIGHUP, or its process killed or gone: a
stored campaign says "running" until its end, and one whose process no
longer runs on this host reads as interrupted), failed or partial. It
reads the campaign's stored spec and trials, replays the trials in order
— frame sizes that were finished are not run again, and the search or
sweep under way picks up where it stopped — and runs the rest, saving
into the same document after every trial. The answer is the one the
uninterrupted campaign would have given. The trial that was under way
when it stopped, and failed trials at the end of the record, run again.
The agents are found as 'campaign run' finds them; if the rates the
spec asks for changed (other link speeds), resume refuses and leaves the
document as it was.`,
		Args: exactArgs(1, "ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.campaignResume(cmd.Context(), args[0], force, cf, out)
		},
	}
	cf.register(cmd, a)
	out.register(cmd.Flags(), "progress events")
	cmd.Flags().BoolVar(&force, "force", false, "resume a campaign stored as running on another host (its process there is gone)")
	return cmd
}

func readSpec(path string) (*campaign.Spec, []byte, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, usagef("campaign spec: %v", err)
	}
	spec, err := campaign.Parse(raw)
	if err != nil {
		return nil, nil, usageError{fmt.Errorf("%s: %w", path, err)}
	}
	return spec, raw, nil
}

func (a *app) campaignRun(ctx context.Context, path string, cf *clusterFlags, out *outputFlags) error {
	if err := out.check(); err != nil {
		return err
	}
	spec, raw, err := readSpec(path)
	if err != nil {
		return err
	}
	return a.onCluster(ctx, cf, spec, raw, out, nil)
}

// campaignResume continues the stored campaign id on the cluster cf
// joins.
func (a *app) campaignResume(ctx context.Context, id string, force bool, cf *clusterFlags, out *outputFlags) error {
	if err := out.check(); err != nil {
		return err
	}
	doc, spec, err := resumable(out.dir, id, force)
	if err != nil {
		return err
	}
	return a.onCluster(ctx, cf, spec, nil, out, doc)
}

// onCluster runs (or resumes) the campaign on the cluster cf joins.
func (a *app) onCluster(ctx context.Context, cf *clusterFlags, spec *campaign.Spec, raw []byte, out *outputFlags, resume *results.Document) error {
	cl, dial, err := cf.open(ctx, a, append(slices.Clone(spec.Agents.Senders), spec.Agents.Receivers...)...)
	if err != nil {
		return err
	}
	defer cl.Close()
	host, _ := os.Hostname()
	coord := &coordinator.Runner{Cluster: cl, Dial: dial, ID: host, Log: a.log.Named("run")}
	return a.campaign(ctx, &campaign.Runner{Cluster: cl, Run: coord.Run}, spec, raw, out, resume)
}

// resumable loads the campaign id from dir and its spec
// (campaign.LoadForResume), what refuses it being bad input.
func resumable(dir, id string, force bool) (*results.Document, *campaign.Spec, error) {
	if dir == "" {
		return nil, nil, usagef("--results-dir is empty: resume reads the campaign from it and saves it there")
	}
	doc, spec, err := campaign.LoadForResume(results.NewStore(dir), id, force)
	switch {
	case errors.Is(err, campaign.ErrResume):
		return nil, nil, usageError{err}
	case err != nil:
		return nil, nil, loadError(err)
	}
	return doc, spec, nil
}

// campaign runs spec (or continues the stored campaign resume, when
// set) with the progress display out asks for, stores it in out.dir as
// it goes (after every trial) and prints the result.
func (a *app) campaign(ctx context.Context, r *campaign.Runner, spec *campaign.Spec, raw []byte, out *outputFlags, resume *results.Document) error {
	r.Log, r.Version = a.log.Named("campaign"), version
	var stream *ndjson
	switch {
	case out.jsonStream:
		stream = &ndjson{w: a.stdout}
		r.OnEvent = func(e campaign.Event) { stream.write(e) }
	case isTerminal(a.stderr):
		bar := newProgressBar(a.stderr)
		defer bar.close()
		r.OnEvent = bar.event
	}
	var store *results.Store
	if out.dir != "" {
		store = results.NewStore(out.dir)
		r.Save = func(d *results.Document) error { _, err := store.Save(d); return err }
		self := results.LocalProcesses{}.Self()
		r.Writer = &self
	}
	var doc *results.Document
	var err error
	if resume != nil {
		doc, err = r.Resume(ctx, spec, resume)
	} else {
		doc, err = r.RunCampaign(ctx, spec, raw)
	}
	if doc == nil {
		if errors.Is(err, campaign.ErrStore) {
			return err
		}
		return usageError{err}
	}
	if stream == nil {
		stream = &ndjson{w: a.stdout}
	}
	// Printed first: a store that fails must not take the answer with it.
	if perr := a.emitResult(stream, out.jsonStream, out.json, doc, func(w io.Writer) { _ = report.Table(w, doc) }); perr != nil {
		return perr
	}
	if err != nil {
		return err // the store failed: ErrStore, naming the file
	}
	if store != nil {
		a.log.Info("result stored", "id", doc.ID, "file", store.Path(doc.ID))
	}
	if err := a.writeHTML(out, doc); err != nil {
		return err
	}
	if doc.Status != coordinator.StatusOK {
		return fmt.Errorf("campaign %s %s: %s", doc.ID, doc.Status, doc.Error)
	}
	return nil
}

// store saves doc in out.dir (when set) and writes the HTML report
// out.html asks for.
func (a *app) store(out *outputFlags, doc *results.Document) error {
	if out.dir != "" {
		path, err := results.NewStore(out.dir).Save(doc)
		if err != nil {
			return fmt.Errorf("store the result: %w", err)
		}
		a.log.Info("result stored", "id", doc.ID, "file", path)
	}
	return a.writeHTML(out, doc)
}

// writeHTML writes the HTML report out.html asks for (- is stdout).
func (a *app) writeHTML(out *outputFlags, doc *results.Document) error {
	if out.html == "" {
		return nil
	}
	var buf bytes.Buffer
	if err := report.HTML(&buf, doc); err != nil {
		return fmt.Errorf("HTML report: %w", err)
	}
	if err := safefile.Output(out.html, a.stdout, buf.Bytes()); err != nil {
		return fmt.Errorf("HTML report: %w", err)
	}
	if out.html != safefile.Stdout {
		a.log.Info("report written", "file", out.html)
	}
	return nil
}

// progressBar draws the campaign's and the current search's progress on
// a terminal: sizes done, current size and rate, best so far.
type progressBar struct {
	w  io.Writer
	mu sync.Mutex
	t0 time.Time
}

func newProgressBar(w io.Writer) *progressBar { return &progressBar{w: w, t0: time.Now()} }

func (p *progressBar) event(e campaign.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if line, ok := report.ProgressLine(e, time.Since(p.t0)); ok {
		fmt.Fprint(p.w, line)
	}
}

func (p *progressBar) close() { fmt.Fprint(p.w, "\r\033[K") }
