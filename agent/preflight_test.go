package agent

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/serf/serf"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/linerate/linerate/doctor"
	"github.com/linerate/linerate/internal/fsfixture"
	lineratev1 "github.com/linerate/linerate/proto/linerate/v1"
	"github.com/linerate/linerate/topology"
)

// rx0RPS is the RPS mask of eth0's queue rx-0 in the fixture host.
const rx0RPS = "/sys/devices/pci0000:3a/0000:3a:00.0/0000:3b:00.0/net/eth0/queues/rx-0/rps_cpus"

// fixtureService is an agent on eth0 of the 4-queue fixture host, with
// an RPS mask on its rx-0 (f: CPUs 0-3), allowing the fix classes allow
// (nil: every class).
func fixtureService(t *testing.T, allow []doctor.FixClass) (*service, string) {
	t.Helper()
	dir := t.TempDir()
	if err := fsfixture.UnpackFile(filepath.Join("..", "topology", "testdata", "apply-basic.tree"), dir); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, rx0RPS), []byte("f\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := Config{Name: "a1", Role: RoleBoth, Iface: "eth0", StateDir: t.TempDir(), Root: dir, AllowFixes: allow, Logger: testLog(t), netOS: fakeNetOS{}}
	if err := cfg.defaults(); err != nil {
		t.Fatal(err)
	}
	root, err := topology.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	s := newService(&cfg, root, cfg.Logger, func() []serf.Member { return nil })
	t.Cleanup(func() { root.Close() })
	return s, dir
}

// Describe runs every check of doctor on the agent's interface, through
// its root, for the run the request describes, in doctor's order; a bad
// option is refused naming it and what is valid.
func TestDescribeChecks(t *testing.T) {
	s, _ := fixtureService(t, nil)
	defer s.close(context.Background())
	ctx := context.Background()
	resp, err := s.Describe(ctx, &lineratev1.DescribeRequest{FrameSize: 1518, Role: "receiver", Irqbalance: "ignore", Addrs: []string{"198.18.0.2"}})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, c := range resp.Checks {
		ids = append(ids, c.Id)
		if c.Status != "PASS" && c.Status != "WARN" && c.Status != "FAIL" {
			t.Errorf("check %s: status %q", c.Id, c.Status)
		}
	}
	if !slices.Equal(ids, doctor.IDs()) || resp.ChecksError != "" || resp.Facts == nil {
		t.Errorf("checks %v (error %q, facts %v), want doctor's %v", ids, resp.ChecksError, resp.Facts, doctor.IDs())
	}
	// Without options: the defaults (the agent's role, the NIC's CPUs).
	if resp, err := s.Describe(ctx, &lineratev1.DescribeRequest{}); err != nil || len(resp.Checks) != len(doctor.IDs()) {
		t.Errorf("describe without options: %v, %d checks", err, len(resp.GetChecks()))
	}
	for _, tc := range []struct {
		req  *lineratev1.DescribeRequest
		want string
	}{
		{&lineratev1.DescribeRequest{Role: "switch"}, `role "switch": valid roles are sender, receiver and both`},
		{&lineratev1.DescribeRequest{Irqbalance: "maybe"}, `irqbalance "maybe": valid values are refuse and ignore`},
		{&lineratev1.DescribeRequest{Addrs: []string{"198.18.0.2", "nope"}}, `addrs[1] "nope": want an IPv4 or IPv6 address`},
		{&lineratev1.DescribeRequest{Backend: "dpdk"}, `backend "dpdk": valid backends are auto, kernel`},
		{&lineratev1.DescribeRequest{Method: "pcap"}, `method "pcap": valid receiver methods are auto, xdp, afpacket and afxdp`},
		{&lineratev1.DescribeRequest{FrameSize: 20}, `frame size 20: want 64 to 65535 bytes`},
	} {
		_, err := s.Describe(ctx, tc.req)
		if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("describe %v: %v, want InvalidArgument with %q", tc.req, err, tc.want)
		}
	}
	b := requestBounds{cpus: s.inv.hostCPUs}
	for _, tc := range []struct {
		req  *lineratev1.DescribeRequest
		want string
	}{
		{&lineratev1.DescribeRequest{FrameSize: -1}, "frame_size -1: want 0 (not checked) to 65535 bytes"},
		{&lineratev1.DescribeRequest{FrameSize: 65536}, "frame_size 65536"},
		{&lineratev1.DescribeRequest{Cpus: []int32{70000}}, "cpus[0] 70000: not a CPU"},
		{&lineratev1.DescribeRequest{Addrs: make([]string, maxAddrs+1)}, "addrs: 1025 addresses, at most 1024"},
		{&lineratev1.DescribeRequest{Backend: strings.Repeat("x", maxOptionName+1)}, "backend: 65 bytes, at most 64"},
		{&lineratev1.DescribeRequest{Method: strings.Repeat("x", maxOptionName+1)}, "method: 65 bytes, at most 64"},
	} {
		wantKind(t, b.check(tc.req), ErrInvalid, tc.want, tc.want)
	}
}

// An agent whose interface the root does not have answers Describe with
// its inventory and says why the checks could not run.
func TestDescribeChecksError(t *testing.T) {
	s := unitService(t, RoleSender, fakeNetOS{})
	resp, err := s.Describe(context.Background(), &lineratev1.DescribeRequest{})
	if err != nil || len(resp.Checks) != 0 || !strings.Contains(resp.ChecksError, "data0") {
		t.Errorf("describe: %v, %d checks, checks_error %q: want none and why", err, len(resp.GetChecks()), resp.GetChecksError())
	}
}

// A Tune's fix classes: one the operator did not allow is refused by
// name before anything is written; fix_only leaves the IRQs alone; an
// unknown class or fix_only without classes is refused.
func TestTuneFixes(t *testing.T) {
	s, dir := fixtureService(t, []doctor.FixClass{doctor.FixRPS})
	defer s.close(context.Background())
	ctx := context.Background()
	_, err := s.tuner.tune(ctx, tuneOptions{irqbalance: "ignore", fixes: []doctor.FixClass{doctor.FixRPS, doctor.FixGovernor}})
	wantKind(t, err, ErrHost, "fix governor: not allowed by this agent's --allow-fixes (it allows rps)", "a class not allowed")
	if j, _ := topology.LoadJournal(s.cfg.StateDir, "eth0"); j != nil {
		t.Errorf("a refused fix left a journal: %+v", j)
	}
	tu, err := s.tuner.tune(ctx, tuneOptions{fixes: []doctor.FixClass{doctor.FixRPS}, fixOnly: true})
	if err != nil || !tu.fixOnly || s.tuner.pinnedIRQs() != 0 {
		t.Fatalf("fix only: %v, %+v, %d IRQs pinned", err, tu, s.tuner.pinnedIRQs())
	}
	if got := affinity(t, dir, 42); got != "0-7\n" {
		t.Errorf("irq 42 after a fix-only tune: %q, want 0-7 (untouched)", got)
	}
	if p := tuningToProto("eth0", tu); len(p.IrqMap) != 0 || p.Journal == "" {
		t.Errorf("fix-only answer %v", p)
	}
	for _, tc := range []struct {
		req  *lineratev1.TuneRequest
		want string
	}{
		{&lineratev1.TuneRequest{FixClasses: []string{"rps", "speed"}}, `fix_classes[1] "speed": valid fix classes are flow-control, coalescing, rings, governor, notrack and rps`},
		{&lineratev1.TuneRequest{FixOnly: true}, "fix_only without fix_classes"},
		{&lineratev1.TuneRequest{FixClasses: []string{"rps"}, Addrs: []string{"x"}}, `addrs[0] "x"`},
	} {
		_, err := tuneOptionsFromProto(tc.req)
		wantKind(t, err, ErrInvalid, tc.want, tc.want)
	}
}

// A journal that holds only settings (a fix, no IRQ pinned) is restored
// by every restore path: at the agent's start after a crash
// (restoreAtStart), and at its shutdown (SIGTERM: close, as a lease's
// end does through endRun).
func TestRestoreSettingsOnly(t *testing.T) {
	for _, path := range []string{"start", "shutdown"} {
		t.Run(path, func(t *testing.T) {
			s, dir := fixtureService(t, nil)
			jo := topology.JournalOptions{StateDir: s.cfg.StateDir, Iface: "eth0", RootName: dir, Owner: topology.AgentOwner("a1", "eth0")}
			set := topology.Setting{Kind: topology.KindFile, Key: rx0RPS, Original: "f", Class: string(doctor.FixRPS)}
			if err := topology.JournalSetting(jo, set); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, rx0RPS), []byte("0\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := topology.SettingApplied(jo, topology.KindFile, rx0RPS, "0"); err != nil {
				t.Fatal(err)
			}
			switch path {
			case "start":
				s.tuner.restoreAtStart(context.Background())
				defer s.close(context.Background())
			case "shutdown":
				if err := s.close(context.Background()); err != nil {
					t.Fatal(err)
				}
			}
			if b, _ := os.ReadFile(filepath.Join(dir, rx0RPS)); string(b) != "f\n" {
				t.Errorf("rps_cpus after the %s restore: %q, want f", path, b)
			}
			if j, err := topology.LoadJournal(s.cfg.StateDir, "eth0"); j != nil || err != nil {
				t.Errorf("journal after the %s restore: %+v, %v: want it gone", path, j, err)
			}
		})
	}
}
