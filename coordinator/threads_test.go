package coordinator

import (
	"fmt"
	"slices"
	"testing"

	"github.com/linerate/linerate/pktgen"
)

func TestPlanThreads(t *testing.T) {
	// Two flows, two threads each, over three tuned queues: flows take
	// the slots in turn, counts and rates split with the remainder first.
	p := planThreads([]int{4, 7}, 2, []pktgen.Slot{{CPU: 0, Queue: 0}, {CPU: 1, Queue: 1}, {CPU: 2, Queue: 2}}, 1001, 1, 7)
	if fmt.Sprint(p.cpus, p.queues, p.flowOf, p.counts, p.rates) != "[0 1 2 0] [0 1 2 0] [4 4 7 7] [501 500 501 500] [4 3 4 3]" {
		t.Errorf("got cpus %v queues %v flows %v counts %v rates %v", p.cpus, p.queues, p.flowOf, p.counts, p.rates)
	}
	// Untuned (no queues), duration run, unpaced: no queues, no counts, no rates.
	p = planThreads([]int{0}, 3, []pktgen.Slot{{CPU: 5, Queue: -1}}, 0, 1, 0)
	if fmt.Sprint(p.cpus, p.queues, p.flowOf, p.counts, p.rates) != "[5 5 5] [] [0 0 0] [] []" {
		t.Errorf("got cpus %v queues %v flows %v counts %v rates %v", p.cpus, p.queues, p.flowOf, p.counts, p.rates)
	}
}

// A flow's threads send exactly its rate together, however it divides,
// and never 0 pps each.
func TestPlanThreadsRatesExact(t *testing.T) {
	slots := []pktgen.Slot{{CPU: 0, Queue: -1}, {CPU: 1, Queue: -1}, {CPU: 2, Queue: -1}, {CPU: 3, Queue: -1}}
	for _, tt := range []struct {
		rate    uint64
		threads int
		want    string
	}{{1000, 3, "[334 333 333]"}, {7, 2, "[4 3]"}, {1, 1, "[1]"}} {
		p := planThreads([]int{0}, tt.threads, slots, 0, 1, tt.rate)
		var sum uint64
		for _, r := range p.rates {
			sum += r
		}
		if fmt.Sprint(p.rates) != tt.want || sum != tt.rate || slices.Contains(p.rates, 0) {
			t.Errorf("rate %d over %d threads: %v (sum %d), want %s", tt.rate, tt.threads, p.rates, sum, tt.want)
		}
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
		{"queues sharing a CPU", []IRQPin{{Queue: 0, CPU: 2}, {Queue: 1, CPU: 2}, {Queue: 2, CPU: 3}}, nil, "[{2 0} {3 2}]"},
		{"untuned", nil, []int{6, 7}, "[{6 -1} {7 -1}]"},
		{"nothing known", nil, nil, "[{0 -1}]"},
	} {
		if got := fmt.Sprint(slotsOf(tt.pins, tt.local, false)); got != tt.want {
			t.Errorf("%s: slots %s, want %s", tt.name, got, tt.want)
		}
	}
	// Kernel pktgen: one slot per tuned queue, CPUs repeating (one
	// device per queue on its IRQ's CPU's thread); a queue's second IRQ
	// adds none.
	for _, tt := range []struct {
		name string
		pins []IRQPin
		want string
	}{
		{"4 queues on 2 CPUs", []IRQPin{{Queue: 0, CPU: 2}, {Queue: 0, CPU: 2}, {Queue: 1, CPU: 3}, {Queue: 2, CPU: 2}, {Queue: 3, CPU: 3}}, "[{2 0} {3 1} {2 2} {3 3}]"},
		{"untuned", nil, "[{6 -1} {7 -1}]"},
	} {
		if got := fmt.Sprint(slotsOf(tt.pins, []int{6, 7}, true)); got != tt.want {
			t.Errorf("per queue, %s: slots %s, want %s", tt.name, got, tt.want)
		}
	}
}

func TestThreadsPerFlow(t *testing.T) {
	for _, tt := range []struct {
		threads, flows int
		tuned          bool
		slots, want    int
		rate, count    uint64
	}{
		{threads: 3, flows: 2, tuned: true, slots: 8, want: 3}, // the spec decides
		{threads: 0, flows: 1, tuned: true, slots: 4, want: 4}, // one per tuned queue
		{threads: 0, flows: 2, tuned: true, slots: 4, want: 1}, // several flows: one each
		{threads: 0, flows: 1, tuned: false, slots: 4, want: 1},
		{threads: 0, flows: 1, tuned: true, slots: 4, rate: 3, want: 3},   // at least 1 pps per thread
		{threads: 0, flows: 1, tuned: true, slots: 4, rate: 400, want: 4}, // the rate covers every queue
		{threads: 0, flows: 1, tuned: true, slots: 4, count: 2, want: 2},  // at least one packet per thread
		{threads: 0, flows: 1, tuned: true, slots: 4, rate: 3, count: 2, want: 2},
		{threads: 0, flows: 1, tuned: true, slots: 4, rate: 400, count: 4, want: 4},
	} {
		if got := threadsPerFlow(tt.threads, tt.flows, tt.tuned, tt.slots, tt.rate, tt.count); got != tt.want {
			t.Errorf("threadsPerFlow(%d, %d, %t, %d, %d, %d) = %d, want %d", tt.threads, tt.flows, tt.tuned, tt.slots, tt.rate, tt.count, got, tt.want)
		}
	}
}

// A plan beyond a sender's CPUs is one error naming the limit.
func TestThreadLimit(t *testing.T) {
	for _, tt := range []struct {
		cpus, flows, perFlow, threads int
		want                          string
	}{
		{2, 1, 2, 2, ""},
		{2, 1, 40, 40, "s1 has 2 CPUs: --threads at most 2"},
		{4, 2, 3, 3, "s1 has 4 CPUs for its 2 flows: --threads at most 2"},
		{2, 3, 1, 0, "s1 has 2 CPUs for its 3 flows: one thread per CPU and at least one per flow: at most 2 flows per sender"},
	} {
		err := threadLimit("s1", "CPUs", tt.cpus, tt.flows, tt.perFlow, tt.threads)
		if got := fmt.Sprint(err); tt.want == "" && err != nil || tt.want != "" && got != tt.want {
			t.Errorf("%d CPUs, %d flows × %d threads: %v, want %q", tt.cpus, tt.flows, tt.perFlow, err, tt.want)
		}
	}
}
