package coordinator

// slot is where a sender thread can run: a CPU and, when tuned, the
// queue whose IRQ is pinned to it (-1: none).
type slot struct{ cpu, queue int32 }

// threadPlan is where a sender's threads run and what each sends.
type threadPlan struct {
	cpus   []int32
	queues []int32  // the queue of each thread; none when untuned
	flowOf []int    // the flow (index into the run's pairs) of each thread
	counts []uint64 // packets per thread; none for a duration run
}

// slotsOf are the places a sender's threads may run: the CPUs of its
// tuned queues (irqMap, one slot per queue), or its NIC's local CPUs
// when nothing was pinned, or CPU 0.
func slotsOf(irqMap []IRQPin, localCPUs []int) []slot {
	var out []slot
	seen := map[int]bool{}
	for _, m := range irqMap {
		if !seen[m.Queue] {
			seen[m.Queue] = true
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
// one flow, else one.
func threadsPerFlow(threads, flows int, tuned bool, slots int) int {
	switch {
	case threads > 0:
		return threads
	case flows == 1 && tuned:
		return slots // one thread per tuned queue
	}
	return 1
}

// planThreads spreads a sender's flows over its slots, perFlow threads
// each (see senderThreads).
func planThreads(flows []int, perFlow int, slots []slot, count uint64) threadPlan {
	var p threadPlan
	p.cpus, p.queues, p.flowOf, p.counts = senderThreads(flows, perFlow, slots, count)
	return p
}

// senderThreads lays out perFlow threads for each of flows over the
// slots in turn: each thread's CPU, its queue (when the slots are tuned
// queues), its flow, and its share of count (the remainder to the first
// threads; none when count is 0).
func senderThreads(flows []int, perFlow int, slots []slot, count uint64) (cpus, queues []int32, flowOf []int, counts []uint64) {
	queued := len(slots) > 0 && slots[0].queue >= 0
	for fi, f := range flows {
		for k := range perFlow {
			sl := slots[(fi*perFlow+k)%len(slots)]
			cpus, flowOf = append(cpus, sl.cpu), append(flowOf, f)
			if queued {
				queues = append(queues, sl.queue)
			}
			if count > 0 {
				c := count / uint64(perFlow)
				if uint64(k) < count%uint64(perFlow) {
					c++
				}
				counts = append(counts, c)
			}
		}
	}
	return cpus, queues, flowOf, counts
}
