package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
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
Errors in the spec name the line and the field.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return a.campaignRun(cmd.Context(), args[0], cf, out) },
	}
	cf.register(run.Flags())
	out.register(run.Flags(), "progress events")
	cmd.AddCommand(run)
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
	cl, dial, err := cf.open(a)
	if err != nil {
		return err
	}
	defer cl.Close()
	host, _ := os.Hostname()
	coord := &coordinator.Runner{Cluster: cl, Dial: dial, ID: host, Log: a.log.Named("run")}
	return a.campaign(ctx, &campaign.Runner{Cluster: cl, Run: coord.Run}, spec, raw, out)
}

// campaign runs spec with the progress display out asks for, stores and
// prints the result.
func (a *app) campaign(ctx context.Context, r *campaign.Runner, spec *campaign.Spec, raw []byte, out *outputFlags) error {
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
	doc, err := r.RunCampaign(ctx, spec, raw)
	if err != nil {
		return usageError{err}
	}
	if stream == nil {
		stream = &ndjson{w: a.stdout}
	}
	// Printed first: a store that fails must not take the answer with it.
	if err := a.emitResult(stream, out.jsonStream, out.json, doc, func(w io.Writer) { _ = report.Table(w, doc) }); err != nil {
		return err
	}
	if err := a.store(out, doc); err != nil {
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
	if out.html != "" {
		var buf bytes.Buffer
		if err := report.HTML(&buf, doc); err != nil {
			return fmt.Errorf("HTML report: %w", err)
		}
		if err := safefile.Output(out.html, a.stdout, buf.Bytes()); err != nil {
			return fmt.Errorf("HTML report: %w", err)
		}
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
