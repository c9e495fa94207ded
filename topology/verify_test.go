package topology

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/linerate/linerate/topology/interrupts"
)

// bump rewrites the fixture's /proc/interrupts adding n interrupts for
// irq on the CPU column col.
func bump(t *testing.T, dir string, irq, col int, n int) {
	t.Helper()
	p := filepath.Join(dir, "proc/interrupts")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	for i, l := range lines {
		f := strings.Fields(l)
		if len(f) > col+1 && f[0] == itoa(irq)+":" {
			var v int
			for _, c := range f[col+1] {
				v = v*10 + int(c-'0')
			}
			f[col+1] = itoa(v + n)
			lines[i] = " " + strings.Join(f, "  ")
		}
	}
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
}

// applied is the fixture host with its plan applied: the host, its NIC
// as read after, and the journal.
func applied(t *testing.T) (*fakeRoot, *NIC, *Journal) {
	t.Helper()
	r, p, state := setup(t)
	if _, err := Apply(context.Background(), r, p, opts(state)); err != nil {
		t.Fatal(err)
	}
	n, err := Inspect(r, "eth0")
	if err != nil {
		t.Fatal(err)
	}
	j, err := LoadJournal(state, "eth0")
	if err != nil {
		t.Fatal(err)
	}
	return r, n, j
}

func TestVerify(t *testing.T) {
	r, n, j := applied(t)
	res, err := Verify(context.Background(), r, n, j, func(context.Context) error {
		bump(t, r.Dir(), 41, 0, 500) // queue 0 on its planned CPU 0
		bump(t, r.Dir(), 42, 5, 7)   // queue 1 planned on CPU 1 fired on CPU 5
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.OffCPU != 1 {
		t.Errorf("OffCPU = %d, want 1: %+v", res.OffCPU, res.IRQs)
	}
	byIRQ := map[int]VerifiedIRQ{}
	for _, q := range res.IRQs {
		byIRQ[q.IRQ] = q
	}
	if q := byIRQ[41]; q.OffCPU || q.Total != 500 || q.Fired["0"] != 500 || q.Planned != "0" || q.Source != "journal" {
		t.Errorf("irq 41: %+v", q)
	}
	if q := byIRQ[42]; !q.OffCPU || q.Fired["5"] != 7 || q.Planned != "1" {
		t.Errorf("irq 42: %+v", q)
	}
	if q := byIRQ[43]; q.OffCPU || q.Total != 0 {
		t.Errorf("irq 43 (idle): %+v", q)
	}
	var b strings.Builder
	if err := res.WriteTable(&b); err != nil || !strings.Contains(b.String(), "5:7") || !strings.Contains(b.String(), "OFF-CPU") {
		t.Errorf("table:\n%s", b.String())
	}
}

func TestVerifyWithoutJournalUsesCurrentAffinity(t *testing.T) {
	r, _, _ := setup(t)
	n, err := Inspect(r, "eth0")
	if err != nil {
		t.Fatal(err)
	}
	res, err := Verify(context.Background(), r, n, nil, func(context.Context) error {
		bump(t, r.Dir(), 44, 6, 3) // affinity 0-7 allows CPU 6
		return nil
	})
	if err != nil || res.OffCPU != 0 {
		t.Fatalf("%v %+v", err, res)
	}
	if q := res.IRQs[3]; q.IRQ != 44 || q.Planned != "0-7" || q.Source != "affinity" || q.Fired["6"] != 3 {
		t.Errorf("irq 44: %+v", q)
	}
}

// TestCompareCountsDownAndMissing: a counter lower after than before (the
// IRQ freed and requested again) counts its value after, noted; an IRQ
// missing from one read has no counts, is never off its CPUs, and is
// noted.
func TestCompareCountsDownAndMissing(t *testing.T) {
	r, n, j := applied(t)
	bump(t, r.Dir(), 41, 3, 100) // before: irq 41 had 100 on CPU 3
	before, err := ReadInterrupts(r)
	if err != nil {
		t.Fatal(err)
	}
	after, err := ReadInterrupts(r)
	if err != nil {
		t.Fatal(err)
	}
	for i := range after.IRQs {
		if after.IRQs[i].Number == 41 {
			after.IRQs[i].Counts[3] = 4 // went down: re-requested, then fired 4 times on CPU 3
		}
	}
	var kept []interrupts.IRQ
	for _, q := range after.IRQs {
		if q.Number != 43 {
			kept = append(kept, q)
		}
	}
	after.IRQs = kept // irq 43 freed during the interval
	res := Compare(n, j, before, after, time.Second)
	byIRQ := map[int]VerifiedIRQ{}
	for _, q := range res.IRQs {
		byIRQ[q.IRQ] = q
	}
	if q := byIRQ[41]; q.Fired["3"] != 4 || !q.OffCPU || !strings.Contains(q.Note, "went down on CPU 3") {
		t.Errorf("irq 41 (counter down on unplanned CPU 3): %+v", q)
	}
	if q := byIRQ[43]; q.OffCPU || len(q.Fired) != 0 || !strings.Contains(q.Note, "not in /proc/interrupts after") {
		t.Errorf("irq 43 (gone): %+v", q)
	}
	if q := byIRQ[42]; q.Note != "" || q.OffCPU {
		t.Errorf("irq 42 (idle, present in both): %+v", q)
	}
	if res.OffCPU != 1 {
		t.Errorf("OffCPU = %d, want 1", res.OffCPU)
	}
	var b strings.Builder
	if err := res.WriteTable(&b); err != nil || !strings.Contains(b.String(), "irq 43: not in /proc/interrupts after") {
		t.Errorf("table (%v):\n%s", err, b.String())
	}
}

// An IRQ whose effective affinity had not yet moved to its planned CPU
// fires once on the old CPU (the interrupt x86 moves it at): not off its
// CPUs, noted. Twice is off its CPUs; so is once on a third CPU.
func TestComparePendingMove(t *testing.T) {
	r, n, j := applied(t)
	for i := range n.Vectors { // planned 0, 1, 2, 3; the kernel still delivers to 5
		n.Vectors[i].Effective = "5"
	}
	before, err := ReadInterrupts(r)
	if err != nil {
		t.Fatal(err)
	}
	bump(t, r.Dir(), 41, 5, 1) // once on the old CPU, then on 0
	bump(t, r.Dir(), 41, 0, 40)
	bump(t, r.Dir(), 42, 5, 2) // twice on the old CPU, never moved
	bump(t, r.Dir(), 43, 6, 1) // once on a CPU it was never on
	bump(t, r.Dir(), 44, 5, 2) // twice on the old CPU (on their way), then on 3
	bump(t, r.Dir(), 44, 3, 30)
	after, err := ReadInterrupts(r)
	if err != nil {
		t.Fatal(err)
	}
	res := Compare(n, j, before, after, time.Second)
	byIRQ := map[int]VerifiedIRQ{}
	for _, q := range res.IRQs {
		byIRQ[q.IRQ] = q
	}
	if q := byIRQ[41]; q.OffCPU || q.Fired["5"] != 1 || !strings.Contains(q.Note, "fired once on CPU 5, its effective affinity before the move to 0") {
		t.Errorf("irq 41 (moved at its first interrupt): %+v", q)
	}
	if q := byIRQ[42]; !q.OffCPU || q.Note != "" {
		t.Errorf("irq 42 (twice on the old CPU, never on its planned one): %+v", q)
	}
	if q := byIRQ[44]; q.OffCPU || q.Fired["5"] != 2 || !strings.Contains(q.Note, "fired 2 times on CPU 5") {
		t.Errorf("irq 44 (twice on the old CPU, then moved): %+v", q)
	}
	if q := byIRQ[43]; !q.OffCPU {
		t.Errorf("irq 43 (once on CPU 6, neither planned nor effective): %+v", q)
	}
	if res.OffCPU != 2 {
		t.Errorf("OffCPU = %d, want 2", res.OffCPU)
	}
}
