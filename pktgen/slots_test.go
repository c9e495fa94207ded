package pktgen

import (
	"fmt"
	"testing"
)

// One slot per tuned queue and per CPU (a queue's second IRQ, a queue
// sharing an earlier queue's CPU add none); per queue, CPUs repeat; an
// untuned host runs on its untuned CPUs, and with none on CPU 0.
func TestSlots(t *testing.T) {
	twoIRQs := []QueuePin{{Queue: 0, CPU: 2}, {Queue: 0, CPU: 3}, {Queue: 1, CPU: 4}}
	roundRobin := []QueuePin{{Queue: 0, CPU: 0}, {Queue: 1, CPU: 1}, {Queue: 2, CPU: 0}, {Queue: 3, CPU: 1}}
	for _, tt := range []struct {
		name     string
		pins     []QueuePin
		untuned  []int
		perQueue bool
		want     string
	}{
		{"tuned", twoIRQs, []int{0, 1}, false, "[{2 0} {4 1}]"},
		{"queues sharing a CPU", []QueuePin{{Queue: 0, CPU: 2}, {Queue: 1, CPU: 2}, {Queue: 2, CPU: 3}}, nil, false, "[{2 0} {3 2}]"},
		{"round robin, a thread per CPU", roundRobin, nil, false, "[{0 0} {1 1}]"},
		{"round robin, per queue", roundRobin, nil, true, "[{0 0} {1 1} {0 2} {1 3}]"},
		{"per queue, a queue's second IRQ", []QueuePin{{Queue: 0, CPU: 2}, {Queue: 0, CPU: 2}, {Queue: 1, CPU: 3}, {Queue: 2, CPU: 2}, {Queue: 3, CPU: 3}}, []int{6, 7}, true, "[{2 0} {3 1} {2 2} {3 3}]"},
		{"untuned", nil, []int{6, 7}, false, "[{6 -1} {7 -1}]"},
		{"untuned, per queue", nil, []int{6, 7}, true, "[{6 -1} {7 -1}]"},
		{"nothing known", nil, nil, false, "[{0 -1}]"},
	} {
		if got := fmt.Sprint(Slots(tt.pins, tt.untuned, tt.perQueue)); got != tt.want {
			t.Errorf("%s: slots %s, want %s", tt.name, got, tt.want)
		}
	}
}

// A Config takes the slots' CPUs, and their queues only when every slot
// has one.
func TestSlotLists(t *testing.T) {
	cpus, queues := SlotLists([]Slot{{CPU: 0, Queue: 0}, {CPU: 1, Queue: 1}, {CPU: 0, Queue: 2}})
	if fmt.Sprint(cpus, queues) != "[0 1 0] [0 1 2]" {
		t.Errorf("tuned: cpus %v queues %v", cpus, queues)
	}
	cpus, queues = SlotLists([]Slot{{CPU: 6, Queue: -1}, {CPU: 7, Queue: -1}})
	if fmt.Sprint(cpus) != "[6 7]" || queues != nil {
		t.Errorf("untuned: cpus %v queues %v, want no queues", cpus, queues)
	}
}
