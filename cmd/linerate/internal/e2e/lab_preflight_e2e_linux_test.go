//go:build linux && traffic

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/linerate/linerate/cmd/linerate/internal/lab"
	"github.com/linerate/linerate/coordinator"
	"github.com/linerate/linerate/doctor"
	"github.com/linerate/linerate/internal/netns/nstest"
	"github.com/linerate/linerate/topology"
)

// irqAffinities are every IRQ's smp_affinity_list of this host.
func irqAffinities(t *testing.T) map[string]string {
	t.Helper()
	files, err := filepath.Glob("/proc/irq/*/smp_affinity_list")
	if err != nil || len(files) == 0 {
		t.Fatalf("/proc/irq/*/smp_affinity_list: %v, %d files", err, len(files))
	}
	out := map[string]string{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue // an IRQ freed meanwhile
		}
		out[f] = strings.TrimSpace(string(b))
	}
	return out
}

// irqbalanceBanningAll starts the real irqbalance (Debian's, 1.9.2) in the
// foreground, never as a service, with a policy script that bans every
// IRQ, so that it runs as a host's irqbalance does and moves none of this
// host's IRQs. The cleanup kills it by its pid, waits for it, and fails
// the test if any IRQ's affinity differs from before it started, after
// it had at least one rebalancing interval (10 s) to move one.
func irqbalanceBanningAll(t *testing.T) int {
	t.Helper()
	bin, err := exec.LookPath("irqbalance")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("irqbalance not found (CI=true, where `make traffic-deps` installs it: apt-get install irqbalance)")
		}
		t.Skip("irqbalance not installed (make traffic-deps installs Debian's, never started as a service)")
	}
	if pids := topology.IRQBalancePIDs(hostRoot(t)); len(pids) > 0 {
		t.Skipf("an irqbalance of this host already runs (pids %v): the test starts its own and must not touch the host's", pids)
	}
	script := filepath.Join(t.TempDir(), "ban-all")
	if err := os.WriteFile(script, []byte("#!/bin/sh\n# irqbalance(1) --policyscript: leave every IRQ alone.\necho ban=true\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	before := irqAffinities(t)
	cmd := exec.Command(bin, "--foreground", "--policyscript="+script)
	var log strings.Builder
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	started := time.Now()
	pid := cmd.Process.Pid
	t.Cleanup(func() {
		if wait := 11*time.Second - time.Since(started); wait > 0 {
			time.Sleep(wait) // at least one rebalancing pass
		}
		_ = syscall.Kill(pid, syscall.SIGTERM)
		_ = cmd.Wait()
		after := irqAffinities(t)
		for f, a := range before {
			if b, ok := after[f]; ok && a != b {
				t.Errorf("irqbalance moved an IRQ of this host: %s %s → %s", f, a, b)
			}
		}
		t.Logf("irqbalance pid %d ran %s, banning every IRQ; %d IRQ affinities unchanged", pid, time.Since(started).Round(time.Second), len(before))
	})
	deadline := time.Now().Add(5 * time.Second)
	for {
		if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid)); err == nil && strings.TrimSpace(string(b)) == "irqbalance" {
			return pid
		}
		if time.Now().After(deadline) {
			t.Fatalf("irqbalance pid %d not running after 5 s:\n%s", pid, log.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// hostRoot is this host's root, for topology's readers.
func hostRoot(t *testing.T) *topology.DirRoot {
	t.Helper()
	r, err := topology.OpenRoot("/")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// TestLabRunPreflightStrict: with irqbalance running, `lab run
// --preflight strict` is refused before any lease, naming each host, the
// irqbalance check, its evidence (the process) and the fix; the hosts'
// checks are in the result, and the lab is left behind by nothing.
func TestLabRunPreflightStrict(t *testing.T) {
	nstest.SkipUnlessRoot(t)
	bin := Binary(t)
	pid := irqbalanceBanningAll(t)
	name := fmt.Sprintf("p%d", os.Getpid()%10000)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "lab", "run", "--name", name, "--senders", "1", "--receivers", "1", "--json", "--log-level", "warn",
		"--results-dir", t.TempDir(), "--count", "1000", "--preflight", "strict")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var res coordinator.Result
	if jerr := json.Unmarshal([]byte(stdout.String()), &res); jerr != nil || err == nil || res.Status != coordinator.StatusFailed {
		t.Fatalf("exit %v, status %q (%v)\nstdout:\n%s\nstderr:\n%s", err, res.Status, jerr, stdout.String(), stderr.String())
	}
	evidence := fmt.Sprintf("irqbalance pid %d: /proc/%d/cmdline:", pid, pid)
	for _, want := range []string{"--preflight strict:", "(no host was leased)", "  s1: irqbalance: " + evidence, "  r1: irqbalance: " + evidence, "fix: systemctl stop irqbalance"} {
		if !strings.Contains(res.Error, want) {
			t.Errorf("error lacks %q:\n%s", want, res.Error)
		}
	}
	if res.FailedPhase != coordinator.PhaseDescribe || len(res.Flows) != 0 {
		t.Errorf("failed in %q with %d flows: want describe, none", res.FailedPhase, len(res.Flows))
	}
	for _, h := range res.Hosts {
		var irqb *doctor.Check
		for i := range h.Checks {
			if h.Checks[i].ID == "irqbalance" {
				irqb = &h.Checks[i]
			}
		}
		if irqb == nil || irqb.Status != doctor.Fail || !irqb.Volatile || h.Tuned != "" {
			t.Errorf("host %s: irqbalance check %+v, tuned %q: want FAIL, volatile, not tuned", h.Name, irqb, h.Tuned)
		}
	}
	assertNoLab(t, name, lab.DefaultDir(name))
}

// nsFile reads or (with value) writes a file of a lab host's namespace
// (its own sysfs, as its agent sees it).
func nsFile(t *testing.T, ns, path, value string) string {
	t.Helper()
	script := "cat " + path
	if value != "" {
		script = "echo " + value + " > " + path + " && cat " + path
	}
	out, err := exec.Command("ip", "netns", "exec", ns, "sh", "-c", script).CombinedOutput()
	if err != nil {
		t.Fatalf("ip netns exec %s %s: %v\n%s", ns, script, err, out)
	}
	return strings.TrimSpace(string(out))
}

// TestLabRunPreflightFix: a lab whose hosts' data0 spread their received
// packets by RPS (rps_cpus 1, set here as a host might have it) runs with
// --preflight fix: each agent applies the rps class (its check's fix),
// journaled before it writes, the result reports what it fixed (1 → 0)
// and that the release restored it, and every rps_cpus reads 1 again.
func TestLabRunPreflightFix(t *testing.T) {
	nstest.SkipUnlessRoot(t)
	bin := Binary(t)
	name := fmt.Sprintf("f%d", os.Getpid()%10000)
	up, out := startLabUp(t, bin, name)
	t.Cleanup(func() {
		_ = up.Process.Signal(syscall.SIGINT)
		_ = up.Wait()
		assertNoLab(t, name, lab.DefaultDir(name))
	})
	const rps = "/sys/class/net/data0/queues/rx-0/rps_cpus"
	hosts := map[string]string{"s1": lab.Prefix(name) + "s1", "r1": lab.Prefix(name) + "r1"}
	before := map[string]string{}
	for h, ns := range hosts {
		before[h] = nsFile(t, ns, rps, "1")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	args := append([]string{"run", "--senders", "s1", "--receivers", "r1", "--count", "1000", "--preflight", "fix", "--json", "--log-level", "warn", "--results-dir", t.TempDir()}, memberFlags(t, out)...)
	cmd := exec.CommandContext(ctx, bin, args...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var res coordinator.Result
	if jerr := json.Unmarshal([]byte(stdout.String()), &res); jerr != nil || res.Status != coordinator.StatusOK {
		t.Fatalf("run: exit %v, status %q %s (%v)\nstderr:\n%s", err, res.Status, res.Error, jerr, stderr.String())
	}
	for _, h := range res.Hosts {
		var fixed []string
		for _, f := range h.Fixed {
			fixed = append(fixed, fmt.Sprintf("%s %s %s: %s → %s", f.Class, f.Setting.Kind, f.Setting.Key, f.From, f.To))
		}
		want := fmt.Sprintf("rps file %s: 1 → 0", rps)
		if len(fixed) != 1 || !strings.HasSuffix(fixed[0], "queues/rx-0/rps_cpus: 1 → 0") || !h.FixesRestored {
			t.Errorf("host %s fixed %q (restored %v): want %q, restored", h.Name, fixed, h.FixesRestored, want)
		}
	}
	after := map[string]string{}
	for h, ns := range hosts {
		after[h] = nsFile(t, ns, rps, "")
	}
	if !maps.Equal(before, after) || before["s1"] != "1" {
		t.Errorf("rps_cpus before the run %v, after %v: want each restored to what it was (1)", before, after)
	}
	t.Logf("fixed and restored: %v → 0 → %v", before, after)
}
