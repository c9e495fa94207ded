package agent

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/linerate/linerate/internal/fsfixture"
	"github.com/linerate/linerate/topology"
)

// fixtureTuner tunes eth0 of the 4-queue fixture host (IRQs 41-44).
func fixtureTuner(t *testing.T) (*tuner, string) {
	t.Helper()
	dir := t.TempDir()
	if err := fsfixture.UnpackFile(filepath.Join("..", "topology", "testdata", "apply-basic.tree"), dir); err != nil {
		t.Fatal(err)
	}
	root, err := topology.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { root.Close() })
	return &tuner{root: root, iface: "eth0", stateDir: t.TempDir(), rootName: dir, log: testLog(t)}, dir
}

func TestTunerTuneRestore(t *testing.T) {
	tu, root := fixtureTuner(t)
	ctx := context.Background()
	for _, tc := range []struct {
		o    tuneOptions
		kind error
		msg  string
	}{
		{tuneOptions{threads: -1}, ErrInvalid, "threads -1: want 0 (every queue) or more"},
		{tuneOptions{irqbalance: "maybe"}, ErrInvalid, `irqbalance "maybe": valid values are refuse and ignore`},
		{tuneOptions{irqbalance: "ignore", exclude: []int{-2}}, ErrInvalid, "exclude_cpus: -2 is not a CPU"},
		{tuneOptions{irqbalance: "ignore", threads: 99}, ErrInvalid, "threads: "},
	} {
		_, err := tu.tune(ctx, tc.o)
		wantKind(t, err, tc.kind, tc.msg, tc.msg)
	}
	if cpus, _ := tu.tuned(); cpus != nil || tu.pinnedIRQs() != 0 {
		t.Errorf("a refused tune left CPUs %v, %d IRQs pinned", cpus, tu.pinnedIRQs())
	}

	res, err := tu.tune(ctx, tuneOptions{irqbalance: "ignore", threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	cpus, queues := tu.tuned()
	if !slices.Equal(cpus, []int{0, 1}) || !slices.Equal(queues, []int{0, 1}) || tu.pinnedIRQs() != 2 || res.journal == "" || res.numa != 0 {
		t.Errorf("tuned CPUs %v queues %v, %d pinned, %+v; want 2 queues on CPUs 0 and 1", cpus, queues, tu.pinnedIRQs(), res)
	}
	if got := affinity(t, root, 42); got != "1\n" {
		t.Errorf("irq 42 after tune: %q, want 1", got)
	}
	r, err := tu.restore(ctx)
	if err != nil || len(r.changes) == 0 {
		t.Fatalf("restore: %v, %d changes", err, len(r.changes))
	}
	if cpus, _ := tu.tuned(); cpus != nil || tu.pinnedIRQs() != 0 {
		t.Errorf("after restore: CPUs %v, %d IRQs pinned", cpus, tu.pinnedIRQs())
	}
	if got := affinity(t, root, 42); got != "0-7\n" {
		t.Errorf("irq 42 after restore: %q, want 0-7", got)
	}
}

func TestTunerNoNIC(t *testing.T) {
	tu, _ := fixtureTuner(t)
	tu.iface = "veth9"
	_, err := tu.tune(context.Background(), tuneOptions{irqbalance: "ignore"})
	wantKind(t, err, ErrHost, "tune: inspect veth9:", "an interface without a NIC")
}
