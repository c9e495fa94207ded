package interrupts

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func FuzzParse(f *testing.F) {
	f.Add([]byte(virtioFile))
	f.Add([]byte(messyFile))
	f.Add([]byte(manyCPUs(128)))
	f.Add([]byte("  CPU0 CPU1 CPU3\n 5: 1 2 3 IO-APIC 5-edge x\nLOC: 7 8 9 Local timer interrupts\n"))
	f.Add([]byte("CPU0\n 9: 1 Hyper-V PCIe MSI eth1\n"))
	f.Add([]byte(""))
	for _, tc := range layoutCases {
		f.Add([]byte("           CPU0       CPU1\n" + tc.row + "\n"))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		tab, err := Parse(bytes.NewReader(data))
		if err != nil {
			return
		}
		cpus := map[int]bool{}
		for _, c := range tab.CPUs {
			cpus[c] = true
		}
		for _, irq := range tab.IRQs {
			for c := range irq.Counts {
				if !cpus[c] {
					t.Fatalf("IRQ %d has count for CPU%d not in header %v", irq.Number, c, tab.CPUs)
				}
			}
			if irq.Actions == nil {
				t.Fatalf("IRQ %d: nil Actions", irq.Number)
			}
			for _, a := range irq.Actions {
				if a == "" {
					t.Fatalf("IRQ %d: empty action in %q", irq.Number, irq.Actions)
				}
				if !irq.HasAction(a) {
					t.Fatalf("IRQ %d: HasAction(%q) false", irq.Number, a)
				}
			}
		}
		for _, row := range tab.Other {
			for c := range row.Counts {
				if !cpus[c] {
					t.Fatalf("row %s has count for CPU%d not in header %v", row.Name, c, tab.CPUs)
				}
			}
		}
		again, err := Parse(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("second parse failed: %v", err)
		}
		if diff := cmp.Diff(tab, again); diff != "" {
			t.Fatalf("re-parse differs (-first +second):\n%s", diff)
		}
	})
}
