package topology

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/linerate/linerate/topology/cpuset"
)

// ErrTooManyThreads is returned when more threads were asked for than
// queues or local CPUs.
var ErrTooManyThreads = errors.New("thread count exceeds queues or local CPUs")

// PlanOptions shape a plan.
type PlanOptions struct {
	// Threads limits the plan to the first N queues; 0 plans every queue.
	Threads int
	// Exclude are CPUs that must not receive queue IRQs (for example
	// irqbalance's banned list or CPUs reserved for the application).
	Exclude cpuset.Set
}

// Plan maps each queue IRQ of a NIC to one CPU. It is pure: Apply does the writing.
type Plan struct {
	NIC *NIC
	// Candidates are the CPUs queues are spread over, in the order they
	// are used: node-local, online, not isolated, first threads of
	// physical cores before their siblings.
	Candidates  []int
	Assignments []Assignment
	// Unplanned are queue IRQs left alone because of Threads.
	Unplanned []Skipped
	// Warnings are what a person should act on before trusting the plan
	// (the NIC's node has no usable CPU, …); Notes are facts of the plan
	// that ask nothing of them (more queues than CPUs: several per CPU).
	Warnings []string
	Notes    []string
}

// Assignment is one queue IRQ and the CPU it goes to.
type Assignment struct {
	Vector
	CPU int
}

// MakePlan plans queue i → one candidate CPU, rx and tx vectors of the
// same queue together, one queue per CPU while CPUs last, then round-robin.
func MakePlan(n *NIC, opts PlanOptions) (*Plan, error) {
	p := &Plan{NIC: n, Warnings: append([]string(nil), n.Warnings...)}
	usable := n.LocalCPUs.Difference(n.Isolated).Difference(opts.Exclude)
	if usable.IsEmpty() {
		usable = n.OnlineCPUs.Difference(n.Isolated).Difference(opts.Exclude)
		if usable.IsEmpty() {
			return nil, fmt.Errorf("plan %s: no usable CPU: local CPUs %s, isolated %s, excluded %s",
				n.Iface, n.LocalCPUs, n.Isolated, opts.Exclude)
		}
		p.Warnings = append(p.Warnings, fmt.Sprintf(
			"every local CPU of %s (%s) is isolated or excluded: using CPUs %s outside the NIC's node",
			n.Iface, n.LocalCPUs, usable))
	}
	p.Candidates = usable.CPUs()
	// Rank each CPU among the usable threads of its core, so that a thread
	// whose sibling is isolated, excluded or offline counts as a physical
	// core of its own and is used before second threads of busy cores.
	rank := map[int]int{}
	for _, c := range p.Candidates {
		for _, s := range n.siblings[c].Intersect(usable).CPUs() {
			if s < c {
				rank[c]++
			}
		}
	}
	sort.SliceStable(p.Candidates, func(i, j int) bool {
		return rank[p.Candidates[i]] < rank[p.Candidates[j]]
	})

	var queues []int
	seen := map[int]bool{}
	for _, v := range n.Vectors {
		if !seen[v.Queue] {
			seen[v.Queue] = true
			queues = append(queues, v.Queue)
		}
	}
	sort.Ints(queues)
	if opts.Threads < 0 {
		return nil, fmt.Errorf("plan %s: --threads %d: want 0 (all queues) or a positive count", n.Iface, opts.Threads)
	}
	if opts.Threads > 0 {
		limit := min(len(queues), len(p.Candidates))
		if opts.Threads > limit {
			return nil, fmt.Errorf("plan %s: thread number %d exceeds min(queues %d, local CPUs %d) = %d: %w",
				n.Iface, opts.Threads, len(queues), len(p.Candidates), limit, ErrTooManyThreads)
		}
		queues = queues[:opts.Threads]
	}
	cpuOf := map[int]int{}
	for i, q := range queues {
		cpuOf[q] = p.Candidates[i%len(p.Candidates)]
	}
	if len(queues) > len(p.Candidates) {
		// A fact, not a fault: the queues' work still reaches every
		// usable local CPU, which is all a CPU per queue would give.
		p.Notes = append(p.Notes, wrapNote(n.Iface, queues, cpuOf))
	}
	for _, v := range n.Vectors {
		cpu, ok := cpuOf[v.Queue]
		if !ok {
			p.Unplanned = append(p.Unplanned, Skipped{IRQ: v.IRQ, Name: v.Name,
				Reason: fmt.Sprintf("queue %d is beyond --threads %d", v.Queue, opts.Threads)})
			continue
		}
		p.Assignments = append(p.Assignments, Assignment{Vector: v, CPU: cpu})
	}
	return p, nil
}

// wrapNote is the note of a plan that put more queues (in order) than
// CPUs on iface: each CPU (cpuOf a queue) with its queues, "4 queues of
// data0 on 2 CPUs (cpu2: q0 q2, cpu3: q1 q3): …".
func wrapNote(iface string, queues []int, cpuOf map[int]int) string {
	byCPU := map[int][]string{}
	var cpus []int
	for _, q := range queues {
		c := cpuOf[q]
		if _, ok := byCPU[c]; !ok {
			cpus = append(cpus, c)
		}
		byCPU[c] = append(byCPU[c], fmt.Sprintf("q%d", q))
	}
	sort.Ints(cpus)
	each := make([]string, len(cpus))
	for i, c := range cpus {
		each[i] = fmt.Sprintf("cpu%d: %s", c, strings.Join(byCPU[c], " "))
	}
	return fmt.Sprintf("%d queues of %s on %d CPUs (%s): more queues than usable local CPUs, so they wrap round-robin, several per CPU",
		len(queues), iface, len(cpus), strings.Join(each, ", "))
}
