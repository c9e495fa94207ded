package coordinator

import (
	"fmt"

	"github.com/linerate/linerate/pktgen"
)

// threadPlan is where a sender's threads run and what each sends.
type threadPlan struct {
	cpus   []int32
	queues []int32  // the queue of each thread; none when untuned
	flowOf []int    // the flow (index into the run's pairs) of each thread
	counts []uint64 // packets per thread; none for a duration run
	rates  []uint64 // packets per second per thread; none when unpaced
}

// slotsOf are the places a sender's threads may run (pktgen.Slots): its
// tuned queues (irqMap, one pin per IRQ), or its NIC's local CPUs when
// nothing was pinned, or CPU 0; perQueue is kernel pktgen's layout.
func slotsOf(irqMap []IRQPin, localCPUs []int, perQueue bool) []pktgen.Slot {
	pins := make([]pktgen.QueuePin, 0, len(irqMap))
	for _, m := range irqMap {
		pins = append(pins, pktgen.QueuePin{Queue: m.Queue, CPU: m.CPU})
	}
	return pktgen.Slots(pins, localCPUs, perQueue)
}

// threadsPerFlow is how many threads send each of a sender's flows: the
// spec's count, or (0) one per slot when the sender was tuned and sends
// one flow, else one. A paced flow (rate pps) on its own gets at most
// rate threads, so that none is left with less than 1 pps, and a flow of
// count packets at most count, so that each sends one (a thread given
// none would send until stopped).
func threadsPerFlow(threads, flows int, tuned bool, slots int, rate, count uint64) int {
	switch {
	case threads > 0:
		return threads
	case flows == 1 && tuned:
		for _, least := range []uint64{rate, count} {
			if least > 0 && uint64(slots) > least {
				slots = int(least)
			}
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
// queues), its flow, its share of count in whole units of unit packets
// (a burst: pktgen sends whole ones; none when count is 0) and its
// share of the flow's rate pps (none when 0), the remainders to the
// first threads of each flow: the threads of a flow send together
// exactly count packets at exactly rate.
func planThreads(flows []int, perFlow int, slots []pktgen.Slot, count, unit, rate uint64) threadPlan {
	var p threadPlan
	queued := len(slots) > 0 && slots[0].Queue >= 0
	for fi, f := range flows {
		for k := range perFlow {
			sl := slots[(fi*perFlow+k)%len(slots)]
			p.cpus, p.flowOf = append(p.cpus, int32(sl.CPU)), append(p.flowOf, f)
			if queued {
				p.queues = append(p.queues, int32(sl.Queue))
			}
		}
		if count > 0 {
			for _, n := range pktgen.SplitCount(count/unit, perFlow) {
				p.counts = append(p.counts, n*unit)
			}
		}
		if rate > 0 {
			p.rates = append(p.rates, pktgen.SplitRate(rate, perFlow)...)
		}
	}
	return p
}
