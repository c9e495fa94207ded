package coordinator

import (
	"fmt"
	"testing"
)

func TestSenderThreads(t *testing.T) {
	// Two flows, two threads each, over three tuned queues: flows take
	// the slots in turn, counts split with the remainder first.
	cpus, queues, flowOf, counts := senderThreads([]int{4, 7}, 2, []slot{{0, 0}, {1, 1}, {2, 2}}, 1001)
	if fmt.Sprint(cpus, queues, flowOf, counts) != "[0 1 2 0] [0 1 2 0] [4 4 7 7] [501 500 501 500]" {
		t.Errorf("got cpus %v queues %v flows %v counts %v", cpus, queues, flowOf, counts)
	}
	// Untuned (no queues), duration run: no queues, no counts.
	cpus, queues, flowOf, counts = senderThreads([]int{0}, 3, []slot{{5, -1}}, 0)
	if fmt.Sprint(cpus, queues, flowOf, counts) != "[5 5 5] [] [0 0 0] []" {
		t.Errorf("got cpus %v queues %v flows %v counts %v", cpus, queues, flowOf, counts)
	}
}

// Tuned queues give one slot each (a queue with two IRQs once); an
// untuned sender runs on its NIC's local CPUs, and with none on CPU 0.
func TestSlotsOf(t *testing.T) {
	pins := []IRQPin{{Queue: 0, IRQ: 40, CPU: 2}, {Queue: 0, IRQ: 41, CPU: 3}, {Queue: 1, IRQ: 42, CPU: 4}}
	for _, tt := range []struct {
		name  string
		pins  []IRQPin
		local []int
		want  string
	}{
		{"tuned", pins, []int{0, 1}, "[{2 0} {4 1}]"},
		{"untuned", nil, []int{6, 7}, "[{6 -1} {7 -1}]"},
		{"nothing known", nil, nil, "[{0 -1}]"},
	} {
		if got := fmt.Sprint(slotsOf(tt.pins, tt.local)); got != tt.want {
			t.Errorf("%s: slots %s, want %s", tt.name, got, tt.want)
		}
	}
}

func TestThreadsPerFlow(t *testing.T) {
	for _, tt := range []struct {
		threads, flows int
		tuned          bool
		slots, want    int
	}{
		{threads: 3, flows: 2, tuned: true, slots: 8, want: 3}, // the spec decides
		{threads: 0, flows: 1, tuned: true, slots: 4, want: 4}, // one per tuned queue
		{threads: 0, flows: 2, tuned: true, slots: 4, want: 1}, // several flows: one each
		{threads: 0, flows: 1, tuned: false, slots: 4, want: 1},
	} {
		if got := threadsPerFlow(tt.threads, tt.flows, tt.tuned, tt.slots); got != tt.want {
			t.Errorf("threadsPerFlow(%d, %d, %t, %d) = %d, want %d", tt.threads, tt.flows, tt.tuned, tt.slots, got, tt.want)
		}
	}
}
