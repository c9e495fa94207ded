//go:build linux

package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/linerate/linerate/coordinator"
	"github.com/linerate/linerate/coordinator/campaign"
	"github.com/linerate/linerate/coordinator/results"
	"github.com/linerate/linerate/coordinator/results/resultstest"
	"github.com/linerate/linerate/internal/cluster/gossip"
	"github.com/linerate/linerate/internal/safefile/safefiletest"
	"github.com/linerate/linerate/receiver"
)

// --html, report -o and the store refuse to replace anything but a
// regular file, leave it as it was, and say so; "-" is standard output.
func TestOutputFilesOnlyReplaceRegularFiles(t *testing.T) {
	dir, a, _, _ := resultsDir(t)
	for what, p := range safefiletest.Special(t) {
		before, _ := os.Lstat(p)
		for _, args := range [][]string{
			{"report", a.ID, "--dir", dir, "-o", p, "--format", "html"},
			{"campaign", "run", "spec.yaml", "--html", p},
			{"campaign", "resume", a.ID, "--html", p},
			{"run", "--senders", "a", "--receivers", "b", "--count", "1", "--html", p},
		} {
			code, _, errOut := linerate(t, args...)
			if code != 2 || !strings.Contains(errOut, p) || !strings.Contains(errOut, "not a regular file") {
				t.Errorf("%s: %v: exit %d: %s", what, args[:2], code, errOut)
			}
		}
		after, _ := os.Lstat(p)
		if before.Mode() != after.Mode() || !os.SameFile(before, after) {
			t.Errorf("%s: changed from %v to %v", what, before.Mode(), after.Mode())
		}
	}
	// The store: a document's file that is not a regular file.
	store := t.TempDir()
	doc := resultstest.Campaign()
	if err := syscall.Mkfifo(filepath.Join(store, doc.ID+".json"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := results.NewStore(store).Save(doc); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("save over a fifo: %v", err)
	}

	// --html - writes the report to standard output.
	var stdout bytes.Buffer
	app := &app{stdout: &stdout, stderr: &bytes.Buffer{}, log: hclog.NewNullLogger()}
	if err := app.writeHTML(&outputFlags{html: "-"}, a); err != nil || !strings.HasPrefix(stdout.String(), "<!DOCTYPE html>") {
		t.Errorf("--html -: %v, %.40q", err, stdout.String())
	}
	if _, err := os.Stat("-"); err == nil {
		t.Error(`--html - made a file named "-"`)
	}
}

// notADir is a results directory that cannot be made: a regular file
// stands where it should be.
func notADir(t *testing.T) string {
	p := filepath.Join(t.TempDir(), "results")
	if err := os.WriteFile(p, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func testApp() (*app, *bytes.Buffer) {
	var stdout bytes.Buffer
	return &app{stdout: &stdout, stderr: &bytes.Buffer{}, log: hclog.NewNullLogger()}, &stdout
}

// A run that went well but could not be stored exits 1 naming the
// directory, after printing its result.
func TestRunFailsWhenStoringFails(t *testing.T) {
	a, stdout := testApp()
	f := &runFlags{}
	f.out.dir = notADir(t)
	err := a.report(resultstest.Run().Run, f)
	var ue usageError
	if err == nil || errors.As(err, &ue) || !strings.Contains(err.Error(), f.out.dir) {
		t.Errorf("store failed: %v", err)
	}
	if stdout.Len() == 0 {
		t.Error("the result was not printed")
	}
}

// campaignLab is two agents and a device that carries everything.
type campaignLab struct{ runs int }

func (campaignLab) Members() []coordinator.Member {
	return []coordinator.Member{
		{Name: "s1", Tags: gossip.Tags{Role: "sender", SpeedMbps: 10000}, Status: "alive"},
		{Name: "r1", Tags: gossip.Tags{Role: "receiver", SpeedMbps: 10000}, Status: "alive"},
	}
}

func (l *campaignLab) run(_ context.Context, s coordinator.Spec) (*coordinator.Result, error) {
	l.runs++
	n := uint64(s.Rate) / 10
	f := coordinator.Reconcile(coordinator.FlowInput{Sender: "s1", Receiver: "r1", Streams: []coordinator.Stream{{Sent: n, StreamReport: receiver.StreamReport{Received: n}}},
		DurationSec: s.Duration.Seconds(), FrameBytes: float64(s.FrameSize - 4), OfferedPPS: float64(s.Rate), AchievedPPS: float64(s.Rate)})
	return &coordinator.Result{RunID: "run", Status: coordinator.StatusOK, Flows: []coordinator.Flow{f}}, nil
}

const sweep = `agents: {senders: [s1], receivers: [r1]}
frame_sizes: [64, 512]
rates: [10%, 20%]
trial_duration: 100ms
between_trials: {pause: 1ms}
`

// A campaign that cannot be stored exits 1 (not bad input), naming the
// directory; one interrupted by Ctrl-C is stored interrupted, exits 1,
// and `campaign resume` finishes it.
func TestCampaignStoreAndResume(t *testing.T) {
	spec, err := campaign.Parse([]byte(sweep))
	if err != nil {
		t.Fatal(err)
	}
	a, _ := testApp()
	lab := &campaignLab{}
	bad := notADir(t)
	err = a.campaign(context.Background(), &campaign.Runner{Cluster: lab, Run: lab.run}, spec, []byte(sweep), &outputFlags{dir: bad}, nil)
	var ue usageError
	if err == nil || errors.As(err, &ue) || !strings.Contains(err.Error(), bad) || lab.runs != 0 {
		t.Errorf("unstorable campaign: %v after %d trials", err, lab.runs)
	}

	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	lab = &campaignLab{}
	interrupt := func(ctx context.Context, s coordinator.Spec) (*coordinator.Result, error) {
		if lab.runs == 2 {
			cancel() // Ctrl-C during trial 3
		}
		return lab.run(ctx, s)
	}
	err = a.campaign(ctx, &campaign.Runner{Cluster: lab, Run: interrupt}, spec, []byte(sweep), &outputFlags{dir: dir}, nil)
	if err == nil || !strings.Contains(err.Error(), "interrupted: stopped after 2 trials") {
		t.Fatalf("interrupted campaign: %v", err)
	}
	entries, _ := results.NewStore(dir).List()
	if len(entries) != 1 || entries[0].Status != results.StatusInterrupted {
		t.Fatalf("stored %+v", entries)
	}
	id := entries[0].ID
	code, _, errOut := linerate(t, "campaign", "resume", id[:10], "--results-dir", dir)
	if code != 2 || !strings.Contains(errOut, "--join") {
		t.Errorf("resume without a cluster: exit %d: %s", code, errOut)
	}
	doc, spec2, err := resumable(dir, id[:10], false)
	if err != nil {
		t.Fatal(err)
	}
	rest := &campaignLab{}
	if err := a.campaign(context.Background(), &campaign.Runner{Cluster: rest, Run: rest.run}, spec2, nil, &outputFlags{dir: dir}, doc); err != nil {
		t.Fatal(err)
	}
	got, err := results.NewStore(dir).Load(id)
	if err != nil || got.Status != coordinator.StatusOK || len(got.Trials) != 4 || len(got.Summary) != 2 || rest.runs != 2 || got.Resumed != 1 {
		t.Errorf("resumed: %v %s, %d trials, %d sizes, %d run again, resumed %d", err, got.Status, len(got.Trials), len(got.Summary), rest.runs, got.Resumed)
	}
	code, _, errOut = linerate(t, "campaign", "resume", id, "--results-dir", dir)
	if code != 2 || !strings.Contains(errOut, "nothing to continue") {
		t.Errorf("resume a finished campaign: exit %d: %s", code, errOut)
	}

	// Still running here: this test process is its writer.
	self := results.LocalProcesses{}.Self()
	got.Status, got.Writer = results.StatusRunning, &self
	if _, err := results.NewStore(dir).Save(got); err != nil {
		t.Fatal(err)
	}
	code, _, errOut = linerate(t, "campaign", "resume", id, "--results-dir", dir)
	if code != 2 || !strings.Contains(errOut, "still running (pid") {
		t.Errorf("resume a running campaign: exit %d: %s", code, errOut)
	}
	elsewhere := self
	elsewhere.Host += "-elsewhere"
	got.Writer = &elsewhere
	results.NewStore(dir).Save(got)
	code, _, errOut = linerate(t, "campaign", "resume", id, "--results-dir", dir)
	if code != 2 || !strings.Contains(errOut, "give --force") {
		t.Errorf("resume a campaign running on another host: exit %d: %s", code, errOut)
	}
}
