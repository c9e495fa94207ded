//go:build linux && traffic

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/linerate/linerate/cmd/linerate/internal/lab"
	"github.com/linerate/linerate/internal/netns/nstest"
)

// A phase of a long-running command and the output line that marks it.
type sigPhase struct{ name, marker string }

// signals are the ones a terminal, an operator or an init system sends.
var signals = []syscall.Signal{syscall.SIGHUP, syscall.SIGINT, syscall.SIGTERM}

// sigCase is one command × signal × phase of TestReliabilitySignals.
type sigCase struct {
	cmd    string
	sig    syscall.Signal
	phase  string
	exit   int
	took   time.Duration
	result string // "clean", or what was left
}

// sigCases are the cases of the pass: every signal at every phase in
// the full pass; SIGHUP while running (and SIGINT at setup for lab run)
// in make test's.
func sigCases(cmd string, phases []sigPhase) []struct {
	sig   syscall.Signal
	phase sigPhase
} {
	var out []struct {
		sig   syscall.Signal
		phase sigPhase
	}
	for _, p := range phases {
		for _, s := range signals {
			if relFull() || s == syscall.SIGHUP && p.name == "running" || cmd == "lab run" && s == syscall.SIGINT && p.name == "setup" {
				out = append(out, struct {
					sig   syscall.Signal
					phase sigPhase
				}{s, p})
			}
		}
	}
	return out
}

// TestReliabilitySignals sends SIGHUP, SIGINT and SIGTERM to every
// long-running command at each phase it goes through and checks what is
// left: lab run, lab up and lab campaign remove their whole lab
// (namespaces, management link, /run/linerate/lab-NAME, agent
// processes) and exit non-zero; run and campaign (coordinators over a
// lab) exit non-zero and leave every agent free and its host as before
// (IRQ files, XDP, not sending); agent stops and restores on SIGINT and
// SIGTERM and keeps serving on SIGHUP (it reloads its certificates).
// Prints the table.
func TestReliabilitySignals(t *testing.T) {
	nstest.SkipUnlessRoot(t)
	bin := Binary(t)
	var rows []sigCase
	labCmds := []struct {
		name   string
		args   []string
		phases []sigPhase
	}{
		{"lab run", []string{"lab", "run", "--senders", "1", "--receivers", "1", "--duration", "4s", "--rate", "2000", "--json-stream"},
			[]sigPhase{{"setup", "lab up"}, {"running", `"phase":"run"`}, {"teardown", `"phase":"restore"`}}},
		{"lab up", []string{"lab", "up", "--senders", "1", "--receivers", "1"},
			[]sigPhase{{"setup", "lab up"}, {"running", "Ctrl-C removes the lab"}, {"teardown", "Ctrl-C removes the lab"}}},
		{"lab campaign", []string{"lab", "campaign", "--senders", "1", "--receivers", "1", "--sizes", "64", "--search", "none",
			"--rates", "1000,1000,1000", "--trial-duration", "1s", "--json-stream"},
			[]sigPhase{{"setup", "lab up"}, {"running", `"event":"trial"`}, {"teardown", `"event":"campaign"`}}},
	}
	for ci, c := range labCmds {
		for k, sc := range sigCases(c.name, c.phases) {
			name := fmt.Sprintf("e%d%d%d", os.Getpid()%1000, ci, k)
			args := append([]string{c.args[0], c.args[1], "--name", name, "--log-level", "info"}, c.args[2:]...)
			if c.name != "lab up" {
				args = append(args, "--results-dir", t.TempDir())
			}
			p := startProc(t, bin, args...)
			row := sigCase{cmd: c.name, sig: sc.sig, phase: sc.phase.name}
			if !p.waitLine(sc.phase.marker, 3*time.Minute) {
				t.Errorf("%s: no %q within 3 min:\n%s", c.name, sc.phase.marker, p.output(20))
				lab.RemoveLab(name, nil)
				continue
			}
			if c.name == "lab up" && sc.phase.name == "teardown" {
				// Its teardown begins with a first signal; the one under
				// test comes on top.
				_ = p.cmd.Process.Signal(syscall.SIGTERM)
			}
			sent := time.Now()
			_ = p.cmd.Process.Signal(sc.sig)
			row.exit = p.wait(2 * time.Minute)
			row.took = time.Since(sent)
			left := lab.Remains(name, lab.DefaultDir(name))
			row.result = "clean"
			if len(left) > 0 {
				row.result = "left " + strings.Join(left, ", ")
				t.Errorf("%s, %s at %s: left %v\n%s", c.name, sc.sig, sc.phase.name, left, p.output(20))
				lab.RemoveLab(name, nil)
			}
			// lab up ends only by a signal: that is its success (0).
			if c.name != "lab up" && row.exit == 0 && sc.phase.name != "teardown" || row.exit == -1 {
				t.Errorf("%s, %s at %s: exit %d, want non-zero\n%s", c.name, sc.sig, sc.phase.name, row.exit, p.output(20))
			}
			rows = append(rows, row)
		}
	}
	rows = append(rows, coordinatorSignals(t)...)
	for _, r := range rows {
		figure(t, "%-13s %-8s %-9s exit %-3d %6s  %s", r.cmd, signalName(r.sig), r.phase, r.exit, r.took.Round(10*time.Millisecond), r.result)
	}
}

func signalName(s syscall.Signal) string {
	return map[syscall.Signal]string{syscall.SIGHUP: "SIGHUP", syscall.SIGINT: "SIGINT", syscall.SIGTERM: "SIGTERM"}[s]
}

// coordinatorSignals are the cases of run, campaign and agent, over one
// 1 → 1 lab.
func coordinatorSignals(t *testing.T) []sigCase {
	r := startRelLab(t, "rf", 1, 1)
	senders, receivers := r.hostNames()
	before := r.state()
	spec := filepath.Join(t.TempDir(), "sweep.yaml")
	yaml := fmt.Sprintf("name: signals\nagents:\n  senders: [%s]\n  receivers: [%s]\nframe_sizes: [64]\nsearch:\n  type: none\nrates: [1000, 1000, 1000]\ntrial_duration: 1s\nrepetitions: 1\ndrain: 100ms\n", senders[0], receivers[0])
	if err := os.WriteFile(spec, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	cmds := []struct {
		name   string
		args   []string
		phases []sigPhase
	}{
		{"run", []string{"run", "--senders", senders[0], "--receivers", receivers[0], "--duration", "4s", "--rate", "2000", "--json-stream"},
			[]sigPhase{{"setup", `"phase":"tune"`}, {"running", `"phase":"run"`}, {"teardown", `"phase":"restore"`}}},
		{"campaign", []string{"campaign", "run", spec, "--json-stream", "--log-level", "info"},
			[]sigPhase{{"setup", "lease"}, {"running", `"event":"trial"`}, {"teardown", `"event":"campaign"`}}},
	}
	var rows []sigCase
	// A coordinator stopped while a lease is granted but not yet answered
	// leaves that agent to its lease's expiry (the default TTL, 15 s).
	restored := func(what string) string {
		took, ok := waitFor(20*time.Second, func() bool {
			return r.state() == before && r.free(r.client(senders[0])) && r.free(r.client(receivers[0]))
		})
		switch {
		case !ok:
			t.Errorf("%s: hosts not as before after %s:\n%s\nwant\n%s", what, took, r.state(), before)
			return "hosts not restored"
		case took > 5*time.Second:
			return fmt.Sprintf("clean after %s (lease expiry)", took.Round(100*time.Millisecond))
		}
		return "clean"
	}
	for _, c := range cmds {
		for _, sc := range sigCases(c.name, c.phases) {
			p := startProc(t, r.bin, append(c.args, r.coordArgs()...)...)
			row := sigCase{cmd: c.name, sig: sc.sig, phase: sc.phase.name}
			if !p.waitLine(sc.phase.marker, 2*time.Minute) {
				t.Errorf("%s: no %q within 2 min:\n%s", c.name, sc.phase.marker, p.output(20))
				continue
			}
			sent := time.Now()
			_ = p.cmd.Process.Signal(sc.sig)
			row.exit = p.wait(time.Minute)
			row.took = time.Since(sent)
			row.result = restored(fmt.Sprintf("%s, %s at %s", c.name, sc.sig, sc.phase.name))
			if row.exit == 0 && sc.phase.name != "teardown" || row.exit == -1 {
				t.Errorf("%s, %s at %s: exit %d, want non-zero\n%s", c.name, sc.sig, sc.phase.name, row.exit, p.output(20))
			}
			rows = append(rows, row)
		}
	}
	return append(rows, agentSignals(t, r, before)...)
}

// agentSignals are the agent's cases, on the lab's receiver: idle
// (serving, no lease), running (a `linerate run` drives it) and teardown
// (the signal on top of a SIGTERM). SIGHUP must leave it serving; after
// SIGINT or SIGTERM it has restored its host and is started again.
func agentSignals(t *testing.T, r *relLab, before string) []sigCase {
	senders, receivers := r.hostNames()
	host := receivers[0]
	var rows []sigCase
	for _, phase := range []string{"idle", "running", "teardown"} {
		for _, sig := range signals {
			if !relFull() && !(sig == syscall.SIGHUP && phase == "running") && !(sig == syscall.SIGTERM && phase == "running") {
				continue
			}
			row := sigCase{cmd: "agent", sig: sig, phase: phase}
			a := r.lab.Agent(host)
			var run *proc
			if phase == "running" {
				run = startProc(t, r.bin, append([]string{"run", "--senders", senders[0], "--receivers", host, "--duration", "3s", "--rate", "2000", "--json-stream"}, r.coordArgs()...)...)
				if !run.waitLine(`"phase":"run"`, 2*time.Minute) {
					t.Fatalf("run never reached its run phase:\n%s", run.output(20))
				}
			}
			if phase == "teardown" {
				_ = a.Cmd.Process.Signal(syscall.SIGTERM)
			}
			sent := time.Now()
			_ = a.Cmd.Process.Signal(sig)
			what := fmt.Sprintf("agent, %s while %s", signalName(sig), phase)
			if sig == syscall.SIGHUP && phase != "teardown" {
				time.Sleep(time.Second)
				row.exit = -1 // still running
				row.result = "kept serving"
				if a.Exited() || !r.free(r.client(host)) && phase == "idle" {
					t.Errorf("%s: the agent stopped or does not answer", what)
					row.result = "stopped"
				}
				if run != nil {
					if code := run.wait(time.Minute); code != 0 {
						t.Errorf("%s: the run failed (exit %d):\n%s", what, code, run.output(10))
						row.result = "the run failed"
					}
				}
				row.took = time.Since(sent)
				rows = append(rows, row)
				continue
			}
			if _, ok := waitFor(30*time.Second, a.Exited); !ok {
				t.Errorf("%s: still running after 30 s", what)
				_ = a.Cmd.Process.Kill()
				waitFor(5*time.Second, a.Exited)
			}
			row.took = time.Since(sent)
			row.exit = a.Cmd.ProcessState.ExitCode()
			if run != nil {
				run.wait(time.Minute)
			}
			row.result = "clean"
			if _, ok := waitFor(5*time.Second, func() bool { return r.state() == before }); !ok {
				t.Errorf("%s: host not restored at exit:\n%s\nwant\n%s", what, r.state(), before)
				row.result = "not restored"
			}
			if _, err := r.lab.Restart(context.Background(), host, r.opts); err != nil {
				t.Fatal(err)
			}
			r.waitAlive()
			rows = append(rows, row)
		}
	}
	return rows
}
