package agent

import (
	"slices"
	"strings"
	"testing"
	"time"

	lineratev1 "github.com/linerate/linerate/proto/linerate/v1"
)

// A Tune that puts more queues than CPUs answers, over mutual TLS, with
// its IRQ plan's note (each CPU with its queues, as the IRQ map pinned
// them) in notes, never in warnings; a Tune with a CPU per queue answers
// with no note (TestLeaseTuneRelease).
func TestTuneNotesOverMTLS(t *testing.T) {
	_, c, root, _ := fixtureAgent(t, 0)
	ctx := ctxT(t, 10*time.Second)
	lease, err := c.AcquireLease(ctx, &lineratev1.AcquireLeaseRequest{CoordinatorId: "coord"})
	if err != nil {
		t.Fatal(err)
	}
	// The fixture's eth0 has 4 queues (IRQs 41-44) local to CPUs 0-7:
	// excluding 2-7 leaves two, as a guest's data NIC has on node 1.
	tr, err := c.Tune(ctx, &lineratev1.TuneRequest{LeaseId: lease.LeaseId, Irqbalance: "ignore", ExcludeCpus: []int32{2, 3, 4, 5, 6, 7}})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"4 queues of eth0 on 2 CPUs (cpu0: q0 q2, cpu1: q1 q3): more queues than usable local CPUs, so they wrap round-robin, several per CPU"}
	if !slices.Equal(tr.Notes, want) {
		t.Errorf("Tune notes %q, want %q", tr.Notes, want)
	}
	for _, w := range tr.Warnings {
		if strings.Contains(w, "queues") {
			t.Errorf("the plan's note is also a warning: %q", w)
		}
	}
	var cpus []int32
	for _, m := range tr.IrqMap {
		cpus = append(cpus, m.Cpu)
	}
	if !slices.Equal(cpus, []int32{0, 1, 0, 1}) || affinity(t, root, 43) != "0\n" {
		t.Errorf("irq map CPUs %v (irq 43 on %q): want queues 0-3 on CPUs 0, 1, 0, 1, as the note says", cpus, affinity(t, root, 43))
	}
	if _, err := c.ReleaseLease(ctx, &lineratev1.ReleaseLeaseRequest{LeaseId: lease.LeaseId}); err != nil {
		t.Fatalf("release: %v", err)
	}
}
