//go:build linux && traffic

package e2e

import (
	"context"
	"fmt"
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
	lineratev1 "github.com/linerate/linerate/proto/linerate/v1"
	"github.com/linerate/linerate/topology"
	"google.golang.org/protobuf/types/known/durationpb"
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
	res, _ := labRunFails(t, bin, name, "--count", "1000", "--preflight", "strict")
	finding := fmt.Sprintf("irqbalance pid %d runs: data0 has no queue IRQs to ban", pid)
	evidence := fmt.Sprintf("irqbalance pid %d: /proc/%d/cmdline:", pid, pid)
	for _, want := range []string{"--preflight strict:", "(no host was leased)", "  s1: irqbalance: " + finding, "  r1: irqbalance: " + finding, evidence, "fix: systemctl stop irqbalance"} {
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

// TestLabAgentPreflightFix drives a lab sender's agent (its real root:
// the namespace's data0, a veth) as a run with --preflight fix does. With
// rps_cpus 1 on data0's rx-0 (set here, as a host might have it) and the
// run on CPU 1, its Describe flags RPS (steering WARN, fix class rps);
// Tune with the rps class, fix_only (a veth has no queue IRQs), writes
// rps_cpus 0 after journaling it and says so (1 → 0); the lease's release
// puts back 1; and a fix interrupted by SIGKILL is put back when the
// agent starts again.
func TestLabAgentPreflightFix(t *testing.T) {
	r := startRelLab(t, "f", 1, 1)
	const rps = "/sys/class/net/data0/queues/rx-0/rps_cpus"
	ns := lab.Prefix(r.name) + "s1"
	if got := nsFile(t, ns, rps, "1"); got != "1" {
		t.Fatalf("rps_cpus of s1's data0 reads %q after writing 1", got)
	}
	ctx := context.Background()
	c := r.client("s1")
	d, err := c.Describe(ctx, &lineratev1.DescribeRequest{Role: "both", Cpus: []int32{1}})
	if err != nil {
		t.Fatal(err)
	}
	var steering *lineratev1.HostCheck
	for _, ch := range d.Checks {
		if ch.Id == "steering" {
			steering = ch
		}
	}
	if steering == nil || steering.Status != "WARN" || steering.FixClass != "rps" || !strings.Contains(strings.Join(steering.Evidence, "\n"), rps+": 1") {
		t.Fatalf("steering check %v (checks error %q): want WARN, fix class rps, naming %s: 1", steering, d.ChecksError, rps)
	}
	fix := func(c lineratev1.AgentClient) (string, []*lineratev1.HostFix, error) {
		l, err := c.AcquireLease(ctx, &lineratev1.AcquireLeaseRequest{CoordinatorId: "preflight-fix-test", Ttl: durationpb.New(time.Minute)})
		if err != nil {
			t.Fatal(err)
		}
		tu, err := c.Tune(ctx, &lineratev1.TuneRequest{LeaseId: l.LeaseId, FixClasses: []string{"rps"}, FixOnly: true, FixCpus: []int32{1}})
		return l.LeaseId, tu.GetFixed(), err
	}
	lease, fixed, err := fix(c)
	if err != nil || len(fixed) != 1 || fixed[0].Class != "rps" || fixed[0].Kind != "file" || fixed[0].Key != rps || fixed[0].From != "1" || fixed[0].To != "0" {
		t.Fatalf("tune (fix rps): %v, fixed %v: want rps file %s 1 → 0", err, fixed, rps)
	}
	if got := nsFile(t, ns, rps, ""); got != "0" {
		t.Errorf("rps_cpus after the fix: %q, want 0", got)
	}
	if _, err := c.ReleaseLease(ctx, &lineratev1.ReleaseLeaseRequest{LeaseId: lease}); err != nil {
		t.Fatal(err)
	}
	if got := nsFile(t, ns, rps, ""); got != "1" {
		t.Errorf("rps_cpus after the release: %q, want 1 (restored)", got)
	}

	// SIGKILLed with the fix in place: its next start puts it back.
	if _, _, err := fix(c); err != nil || nsFile(t, ns, rps, "") != "0" {
		t.Fatalf("tune (fix rps) again: %v", err)
	}
	a := r.lab.Agent("s1")
	_ = a.Cmd.Process.Kill()
	if _, ok := waitFor(5*time.Second, a.Exited); !ok {
		t.Fatal("s1's agent still runs 5 s after SIGKILL")
	}
	if got := nsFile(t, ns, rps, ""); got != "0" {
		t.Fatalf("rps_cpus after SIGKILL: %q, want 0 still (the test proves nothing otherwise)", got)
	}
	if _, err := r.lab.Restart(ctx, "s1", r.opts); err != nil {
		t.Fatal(err)
	}
	if _, ok := waitFor(10*time.Second, func() bool { return nsFile(t, ns, rps, "") == "1" }); !ok {
		t.Errorf("rps_cpus after the agent's restart: %q, want 1 (restored at start)", nsFile(t, ns, rps, ""))
	}
	t.Logf("rps_cpus of s1's data0: 1, fixed to 0 and restored to 1 at release and at the start after a SIGKILL")
}
