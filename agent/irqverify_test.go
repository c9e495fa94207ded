package agent

import (
	"context"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/linerate/linerate/internal/fsfixture"
	"github.com/linerate/linerate/pktgen"
	lineratev1 "github.com/linerate/linerate/proto/linerate/v1"
	"github.com/linerate/linerate/topology"
)

// fixtureHost unpacks the 4-queue fixture host (eth0, IRQs 41-44, CPUs
// 0-7) and returns its directory.
func fixtureHost(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := fsfixture.UnpackFile(filepath.Join("..", "topology", "testdata", "apply-basic.tree"), dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

// fixtureVerifier is an irqVerifier over the fixture host (fixtureHost),
// and the host's directory.
func fixtureVerifier(t *testing.T) (string, *irqVerifier) {
	t.Helper()
	dir := fixtureHost(t)
	root, err := topology.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { root.Close() })
	return dir, &irqVerifier{root: root, stateDir: t.TempDir(), log: testLog(t)}
}

// fire adds the interrupts in add (IRQ → CPU → count) to the fixture
// host's /proc/interrupts, as the kernel would count them.
func fire(t *testing.T, dir string, add map[int]map[int]uint64) {
	t.Helper()
	p := filepath.Join(dir, "proc", "interrupts")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	for i, line := range lines[1:] {
		name, rest, ok := strings.Cut(line, ":")
		irq, err := strconv.Atoi(strings.TrimSpace(name))
		if !ok || err != nil || add[irq] == nil {
			continue
		}
		fields := strings.Fields(rest)
		for cpu, n := range add[irq] {
			v, err := strconv.ParseUint(fields[cpu], 10, 64)
			if err != nil {
				t.Fatalf("irq %d CPU%d: %v", irq, cpu, err)
			}
			fields[cpu] = strconv.FormatUint(v+n, 10)
		}
		lines[i+1] = name + ": " + strings.Join(fields, " ")
	}
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
}

// firingBackend "sends" at its StartAt and, while it does, makes the
// fixture host's queue IRQs fire: what a NIC does under a real send.
type firingBackend struct {
	t   *testing.T
	dir string
	add map[int]map[int]uint64
}

func (firingBackend) Name() pktgen.BackendName { return "firing" }
func (b firingBackend) Run(ctx context.Context, cfg pktgen.Config, _ func(pktgen.Progress)) (*pktgen.Summary, error) {
	if pktgen.WaitUntil(ctx, cfg.StartAt) != nil {
		return &pktgen.Summary{Backend: "firing", Device: cfg.Device, Interrupted: true}, nil
	}
	fire(b.t, b.dir, b.add)
	return &pktgen.Summary{Backend: "firing", Device: cfg.Device, Packets: cfg.Count}, nil
}

// A tuned send's Result says where each queue IRQ fired against the plan
// Tune applied: queue 0 on its CPU 0, queue 1 (planned on CPU 1) on CPU 5
// is off its CPU, the queues that did not fire have no counts.
func TestResultCarriesIRQVerify(t *testing.T) {
	dir := fixtureHost(t)
	certs := testCerts(t)
	a := startAgent(t, Config{Name: "snd", Role: RoleSender, Iface: "eth0", Root: dir, AllowMgmtIface: true,
		AllowDst: []netip.Prefix{netip.MustParsePrefix("198.18.0.0/15")},
		Backend:  firingBackend{t: t, dir: dir, add: map[int]map[int]uint64{41: {0: 500}, 42: {5: 7}}},
		netOS:    fakeNetOS{addrs: map[string][]netip.Addr{"eth0": addrs("198.18.0.1")}}}, certs)
	c := dial(t, a, certs, "coord")
	ctx := ctxT(t, 10*time.Second)
	l, err := c.AcquireLease(ctx, &lineratev1.AcquireLeaseRequest{CoordinatorId: "c1"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Tune(ctx, &lineratev1.TuneRequest{LeaseId: l.LeaseId, Threads: 2, Irqbalance: "ignore"}); err != nil {
		t.Fatal(err)
	}
	res := sendNow(t, ctx, c, l.LeaseId, &lineratev1.SenderConfig{Count: 1000, PktSize: 60, DstMin: "198.18.0.2", DstMac: "02:00:00:00:00:02"})
	v := res.IrqVerify
	if v == nil {
		t.Fatalf("no irq_verify; reason %q", res.IrqVerifyReason)
	}
	if v.Iface != "eth0" || v.OffCpu != 1 || len(v.Irqs) != 4 {
		t.Fatalf("irq_verify %v: want eth0's 4 queue IRQs, 1 off its CPUs", v)
	}
	by := map[int32]*lineratev1.VerifiedIrq{}
	for _, q := range v.Irqs {
		by[q.Irq] = q
	}
	if q := by[41]; q.Planned != "0" || q.Source != "journal" || q.OffCpu || len(q.Fired) != 1 || q.Fired[0] != 500 {
		t.Errorf("irq 41: %v; want planned 0 from the journal, fired 500 on CPU 0", q)
	}
	if q := by[42]; q.Planned != "1" || !q.OffCpu || len(q.Fired) != 1 || q.Fired[5] != 7 {
		t.Errorf("irq 42: %v; want planned 1, fired 7 on CPU 5, off its CPU", q)
	}
	if q := by[43]; q.OffCpu || len(q.Fired) != 0 || q.Source != "affinity" {
		t.Errorf("irq 43 (not planned by a 2-thread tune, idle): %v", q)
	}
}

// A receiver's verification spans Arm to its final collect; an interface
// without a device has none, with the reason the coordinator gives for
// not tuning it.
func TestIRQVerifierSpans(t *testing.T) {
	dir, v := fixtureVerifier(t)

	s := v.begin("eth0")
	fire(t, dir, map[int]map[int]uint64{44: {6: 3}, 41: {2: 9}})
	got := v.end(s)
	if got.result == nil {
		t.Fatalf("no result: %q", got.reason)
	}
	// Untuned: planned is each IRQ's affinity now, 0-7 for all.
	if got.result.OffCPU != 0 {
		t.Errorf("untuned, every IRQ on 0-7: off_cpu %d, want 0: %+v", got.result.OffCPU, got.result.IRQs)
	}
	for _, q := range got.result.IRQs {
		if q.Source != "affinity" || q.Planned != "0-7" {
			t.Errorf("irq %d: planned %s from %s, want 0-7 from affinity", q.IRQ, q.Planned, q.Source)
		}
	}
	if p := irqVerifyToProto(got.result); p.Irqs[3].Fired[6] != 3 || p.Irqs[0].Fired[2] != 9 {
		t.Errorf("proto: %v", p)
	}

	if err := os.Symlink("../../devices/virtual/net/veth7", filepath.Join(dir, "sys/class/net/veth7")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "sys/devices/virtual/net/veth7"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got := v.end(v.begin("veth7")); got.result != nil || got.reason != topology.NoQueueIRQs {
		t.Errorf("veth: %+v, want no result and %q", got, topology.NoQueueIRQs)
	}
	if got := v.end(v.begin("nope0")); got.result != nil || !strings.Contains(got.reason, "not verified: inspect the NIC nope0") {
		t.Errorf("missing interface: %+v", got)
	}
}

// The afxdp receiver's readers go where each receive queue's IRQ is
// pinned: the fixture host's four queues, all on 0-7 until pinned, then
// on the CPUs written to their affinity (as Tune writes them); an
// interface without queue IRQs leaves the receiver's default.
func TestQueueCPUs(t *testing.T) {
	dir, v := fixtureVerifier(t)
	if got := v.queueCPUs("eth0"); !slices.Equal(got, []int{0, 0, 0, 0}) {
		t.Errorf("untuned: %v, want every queue on CPU 0 (the first of 0-7)", got)
	}
	for irq, cpu := range map[int]string{41: "2", 42: "3", 43: "6", 44: "7"} {
		if err := os.WriteFile(filepath.Join(dir, "proc", "irq", strconv.Itoa(irq), "smp_affinity_list"), []byte(cpu+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if got := v.queueCPUs("eth0"); !slices.Equal(got, []int{2, 3, 6, 7}) {
		t.Errorf("pinned: %v, want [2 3 6 7]", got)
	}
	if got := v.queueCPUs("nosuch0"); got != nil {
		t.Errorf("no such interface: %v, want nil", got)
	}
}
