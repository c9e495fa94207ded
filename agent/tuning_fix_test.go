package agent

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"testing"

	"github.com/linerate/linerate/doctor"
	lineratev1 "github.com/linerate/linerate/proto/linerate/v1"
	"github.com/linerate/linerate/topology"
)

// writeFixture writes content at path under the fixture root dir.
func writeFixture(t *testing.T, dir, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(path)), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, path), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A Tune with fixes that the irqbalance policy refuses changes nothing:
// the refusal comes before any fix is written, not only before the IRQs.
func TestTuneIRQBalanceRefusedBeforeFixes(t *testing.T) {
	s, dir := fixtureService(t, []doctor.FixClass{doctor.FixRPS})
	defer s.close(context.Background())
	writeFixture(t, dir, "/proc/4242/comm", "irqbalance\n")
	_, err := s.tuner.tune(context.Background(), tuneOptions{fixes: []doctor.FixClass{doctor.FixRPS}})
	wantKind(t, err, ErrHost, "irqbalance is running (pid [4242])", "irqbalance refused")
	if !errors.Is(err, topology.ErrIRQBalance) {
		t.Errorf("refusal %v: not topology.ErrIRQBalance", err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, rx0RPS)); string(b) != "f\n" {
		t.Errorf("rps_cpus after a refused tune: %q, want f (untouched)", b)
	}
	if j, _ := topology.LoadJournal(s.cfg.StateDir, "eth0"); j != nil {
		t.Errorf("a refused tune left a journal: %+v", j)
	}
}

// The fixes of a Tune are for the CPUs the run's plan pins (one thread:
// one CPU), not for every CPU of the default plan.
func TestTuneFixesPlannedCPUs(t *testing.T) {
	s, dir := fixtureService(t, []doctor.FixClass{doctor.FixGovernor})
	defer s.close(context.Background())
	for cpu := 0; cpu < 8; cpu++ {
		writeFixture(t, dir, fmt.Sprintf("/sys/devices/system/cpu/cpu%d/cpufreq/scaling_governor", cpu), "powersave\n")
	}
	tu, err := s.tuner.tune(context.Background(), tuneOptions{threads: 1, irqbalance: "ignore", fixes: []doctor.FixClass{doctor.FixGovernor}})
	if err != nil {
		t.Fatal(err)
	}
	cpus, _ := s.tuner.tuned()
	if len(cpus) != 1 {
		t.Fatalf("one thread pinned to %v", cpus)
	}
	for cpu := 0; cpu < 8; cpu++ {
		b, _ := os.ReadFile(filepath.Join(dir, fmt.Sprintf("/sys/devices/system/cpu/cpu%d/cpufreq/scaling_governor", cpu)))
		want := "powersave\n"
		if cpu == cpus[0] {
			want = "performance\n"
		}
		if string(b) != want {
			t.Errorf("cpu%d governor %q, want %q (the plan pins cpu%d; fixed %+v)", cpu, b, want, cpus[0], tu.fixed)
		}
	}
}

// An agent allows no fix class unless its operator opts in
// (--allow-fixes), as with --allow-dst.
func TestAllowFixesDefaultNone(t *testing.T) {
	s, dir := fixtureService(t, nil)
	defer s.close(context.Background())
	_, err := s.tuner.tune(context.Background(), tuneOptions{irqbalance: "ignore", fixes: []doctor.FixClass{doctor.FixRPS}})
	wantKind(t, err, ErrHost, "fix rps: not allowed by this agent's --allow-fixes (it allows none)", "the default")
	if b, _ := os.ReadFile(filepath.Join(dir, rx0RPS)); string(b) != "f\n" {
		t.Errorf("rps_cpus after a refused fix: %q, want f", b)
	}
}

// A NOTRACK fix over one of the agent's own management addresses is
// refused, naming it, before anything is written; over the data
// addresses it is not refused for that.
func TestNotrackRefusesMgmtAddr(t *testing.T) {
	s, _ := fixtureService(t, []doctor.FixClass{doctor.FixNotrack})
	defer s.close(context.Background())
	s.cfg.Bind, s.cfg.GRPCAddr = "10.77.0.2:7946", "10.77.0.2:7443"
	mgmt := netip.MustParseAddr("10.77.0.2")
	_, err := s.pre.fix(context.Background(), doctor.Options{Addrs: []netip.Addr{netip.MustParseAddr("198.18.0.2"), mgmt}}, []doctor.FixClass{doctor.FixNotrack})
	wantKind(t, err, ErrHost, "fix notrack: address 10.77.0.2 is this agent's management address", "notrack over the management address")
	if j, _ := topology.LoadJournal(s.cfg.StateDir, "eth0"); j != nil {
		t.Errorf("a refused fix left a journal: %+v", j)
	}
	if err := s.pre.refuseMgmtNotrack(doctor.Options{Addrs: []netip.Addr{netip.MustParseAddr("198.18.0.2")}}, []doctor.FixClass{doctor.FixNotrack}); err != nil {
		t.Errorf("notrack over a data address: %v", err)
	}
	s.cfg.Bind, s.cfg.GRPCAddr = "0.0.0.0:7946", ""
	if got := s.cfg.listenAddrs(); len(got) != 0 {
		t.Errorf("listen addresses of 0.0.0.0: %v, want none", got)
	}
}

// A fix that fails keeps its cause in the chain: the caller can tell a
// missing interface from other failures.
func TestFixErrorKeepsChain(t *testing.T) {
	s, _ := fixtureService(t, []doctor.FixClass{doctor.FixRPS})
	defer s.close(context.Background())
	s.pre.iface = "nope0"
	_, err := s.pre.fix(context.Background(), doctor.Options{}, []doctor.FixClass{doctor.FixRPS})
	if !errors.Is(err, topology.ErrNoInterface) || !errors.Is(err, ErrFailed) {
		t.Errorf("fix of a missing interface: %v: want ErrFailed wrapping topology.ErrNoInterface", err)
	}
}

// A restore says what it did to each fixed setting, in the release's and
// Restore's answers: restored, or skipped (changed by someone else since)
// with why.
func TestRestoreSaysSettings(t *testing.T) {
	for _, tc := range []struct {
		name, meddle, status string
	}{{"restored", "", topology.StatusRestored}, {"skipped", "3\n", topology.StatusSkipped}} {
		t.Run(tc.name, func(t *testing.T) {
			s, dir := fixtureService(t, []doctor.FixClass{doctor.FixRPS})
			defer s.close(context.Background())
			ctx := context.Background()
			if _, err := s.tuner.tune(ctx, tuneOptions{fixes: []doctor.FixClass{doctor.FixRPS}, fixOnly: true}); err != nil {
				t.Fatal(err)
			}
			if tc.meddle != "" {
				writeFixture(t, dir, rx0RPS, tc.meddle)
			}
			r, err := s.tuner.restore(ctx)
			if err != nil {
				t.Fatal(err)
			}
			p := releasedToProto(r)
			if len(p.Settings) != 1 || p.Settings[0].Key != "/sys/class/net/eth0/queues/rx-0/rps_cpus" || p.Settings[0].Status != tc.status || p.Settings[0].Kind != string(topology.KindFile) {
				t.Errorf("released settings %v: want eth0 rx-0 rps_cpus %s", p.Settings, tc.status)
			}
			if q := restoredToProto("eth0", r); len(q.Settings) != 1 || q.Settings[0].Status != tc.status {
				t.Errorf("Restore's settings %v", q.Settings)
			}
			if tc.status == topology.StatusSkipped && p.Settings[0].Note == "" {
				t.Errorf("a skipped setting without why: %v", p.Settings[0])
			}
		})
	}
}

// Describe says which fix classes the agent allows: none by default.
func TestDescribeAllowedFixes(t *testing.T) {
	for _, allow := range [][]doctor.FixClass{nil, {doctor.FixRPS, doctor.FixRings}} {
		s, _ := fixtureService(t, allow)
		resp, err := s.Describe(context.Background(), &lineratev1.DescribeRequest{})
		s.close(context.Background())
		if err != nil || len(resp.AllowedFixes) != len(allow) || len(allow) > 0 && resp.AllowedFixes[1] != "rings" {
			t.Errorf("allowing %v: describe %v, allowed_fixes %v", allow, err, resp.GetAllowedFixes())
		}
	}
}
