package coordinator

import (
	"fmt"
	"slices"
	"strings"
)

// IRQPlanNote is the note of a host whose tuning put more queues than
// CPUs (pins, its IRQ map): the plan wraps them round-robin, several per
// CPU. It is a fact of the plan, not a warning: every usable CPU local to
// the NIC takes queues, which is all a CPU per queue would give. "" when
// every queue has a CPU of its own.
func IRQPlanNote(iface string, pins []IRQPin) string {
	byCPU := map[int][]int{}
	var queues []int
	for _, p := range pins {
		if slices.Contains(queues, p.Queue) {
			continue
		}
		queues = append(queues, p.Queue)
		byCPU[p.CPU] = append(byCPU[p.CPU], p.Queue)
	}
	if len(queues) <= len(byCPU) {
		return ""
	}
	cpus := make([]int, 0, len(byCPU))
	for c := range byCPU {
		cpus = append(cpus, c)
	}
	slices.Sort(cpus)
	var each []string
	for _, c := range cpus {
		qs := make([]string, len(byCPU[c]))
		for i, q := range byCPU[c] {
			qs[i] = fmt.Sprintf("q%d", q)
		}
		each = append(each, fmt.Sprintf("cpu%d: %s", c, strings.Join(qs, " ")))
	}
	return fmt.Sprintf("%d queues of %s on %d CPUs (%s): more queues than usable local CPUs, so they wrap round-robin, several per CPU",
		len(queues), iface, len(cpus), strings.Join(each, ", "))
}
