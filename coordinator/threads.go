package coordinator

import (
	"fmt"

	"github.com/linerate/linerate/pktgen"
)

// slot is where a sender thread can run: a CPU and, when tuned, the
// queue whose IRQ is pinned to it (-1: none).
type slot struct{ cpu, queue int32 }

// threadPlan is where a sender's threads run and what each sends.
type threadPlan struct {
	cpus   []int32
	queues []int32  // the queue of each thread; none when untuned
	flowOf []int    // the flow (index into the run's pairs) of each thread
	counts []uint64 // packets per thread; none for a duration run
	rates  []uint64 // packets per second per thread; none when unpaced
}

// slotsOf are the places a sender's threads may run: the CPUs of its
// tuned queues (irqMap, one slot per queue, and per CPU: a queue whose
// IRQ shares a CPU with an earlier queue's adds none, unless perQueue:
// kernel pktgen runs one device per queue, several on one CPU's
// thread), or its NIC's local CPUs when nothing was pinned, or CPU 0.
func slotsOf(irqMap []IRQPin, localCPUs []int, perQueue bool) []slot {
	var out []slot
	seenQ, seenCPU := map[int]bool{}, map[int]bool{}
	for _, m := range irqMap {
		if !seenQ[m.Queue] && (perQueue || !seenCPU[m.CPU]) {
			seenQ[m.Queue], seenCPU[m.CPU] = true, true
			out = append(out, slot{cpu: int32(m.CPU), queue: int32(m.Queue)})
		}
	}
	if len(out) == 0 {
		for _, c := range localCPUs {
			out = append(out, slot{cpu: int32(c), queue: -1})
		}
	}
	if len(out) == 0 {
		out = []slot{{cpu: 0, queue: -1}}
	}
	return out
}

// threadsPerFlow is how many threads send each of a sender's flows: the
// spec's count, or (0) one per slot when the sender was tuned and sends
// one flow, else one. A paced flow (rate pps) on its own gets at most
// rate threads, so that none is left with less than 1 pps.
func threadsPerFlow(threads, flows int, tuned bool, slots int, rate uint64) int {
	switch {
	case threads > 0:
		return threads
	case flows == 1 && tuned:
		if rate > 0 && uint64(slots) > rate {
			return int(rate)
		}
		return slots // one thread per tuned queue
	}
	return 1
}

// threadLimit refuses a plan of perFlow threads for each of flows on a
// sender with cpus places to run them (one thread per place), naming the
// limit: "s1 has 2 CPUs: --threads at most 2". what says what the places
// are ("CPUs", "tuned queues"); threads is the spec's --threads (0:
// automatic).
func threadLimit(name, what string, cpus, flows, perFlow, threads int) error {
	if flows*perFlow <= cpus {
		return nil
	}
	if threads > 0 && cpus >= flows {
		if flows == 1 {
			return fmt.Errorf("%s has %d %s: --threads at most %d", name, cpus, what, cpus)
		}
		return fmt.Errorf("%s has %d %s for its %d flows: --threads at most %d", name, cpus, what, flows, cpus/flows)
	}
	return fmt.Errorf("%s has %d %s for its %d flows: one thread per CPU and at least one per flow: at most %d flows per sender", name, cpus, what, flows, cpus)
}

// planThreads lays out perFlow threads for each of flows over the slots
// in turn: each thread's CPU, its queue (when the slots are tuned
// queues), its flow, its share of count (none when count is 0) and its
// share of the flow's rate pps (none when 0), the remainders to the
// first threads of each flow: the threads of a flow send together
// exactly count packets at exactly rate.
func planThreads(flows []int, perFlow int, slots []slot, count, rate uint64) threadPlan {
	var p threadPlan
	queued := len(slots) > 0 && slots[0].queue >= 0
	for fi, f := range flows {
		for k := range perFlow {
			sl := slots[(fi*perFlow+k)%len(slots)]
			p.cpus, p.flowOf = append(p.cpus, sl.cpu), append(p.flowOf, f)
			if queued {
				p.queues = append(p.queues, sl.queue)
			}
		}
		if count > 0 {
			p.counts = append(p.counts, pktgen.SplitCount(count, perFlow)...)
		}
		if rate > 0 {
			p.rates = append(p.rates, pktgen.SplitRate(rate, perFlow)...)
		}
	}
	return p
}
