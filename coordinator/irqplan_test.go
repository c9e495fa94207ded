package coordinator

import (
	"testing"

	lineratev1 "github.com/linerate/linerate/proto/linerate/v1"
)

// More queues than CPUs in a host's IRQ map is a note naming each CPU's
// queues (a queue's rx and tx vectors are one queue), never a warning;
// a queue per CPU, or fewer queues (--threads), is nothing to say.
func TestIRQPlanNote(t *testing.T) {
	wrapped := []*lineratev1.IrqMapping{
		{Queue: 0, Irq: 28, Cpu: 2}, {Queue: 0, Irq: 29, Cpu: 2}, {Queue: 1, Irq: 30, Cpu: 3}, {Queue: 1, Irq: 31, Cpu: 3},
		{Queue: 2, Irq: 32, Cpu: 2}, {Queue: 2, Irq: 33, Cpu: 2}, {Queue: 3, Irq: 34, Cpu: 3}, {Queue: 3, Irq: 35, Cpu: 3},
	}
	h := &Host{Name: "s1", Iface: "data0"}
	tunedInto(h, &lineratev1.TuneResponse{IrqMap: wrapped})
	want := "4 queues of data0 on 2 CPUs (cpu2: q0 q2, cpu3: q1 q3): more queues than usable local CPUs, so they wrap round-robin, several per CPU"
	if len(h.Notes) != 1 || h.Notes[0] != want || len(h.Warnings) != 0 {
		t.Errorf("notes %q, warnings %q: want the note %q and no warning", h.Notes, h.Warnings, want)
	}
	for name, m := range map[string][]*lineratev1.IrqMapping{
		"a queue per CPU": {{Queue: 0, Irq: 28, Cpu: 2}, {Queue: 0, Irq: 29, Cpu: 2}, {Queue: 1, Irq: 30, Cpu: 3}},
		"--threads 2":     wrapped[:4],
		"no queue IRQs":   nil,
	} {
		h := &Host{Name: "s1", Iface: "data0"}
		tunedInto(h, &lineratev1.TuneResponse{IrqMap: m})
		if len(h.Notes) != 0 {
			t.Errorf("%s: notes %q, want none", name, h.Notes)
		}
	}
}
