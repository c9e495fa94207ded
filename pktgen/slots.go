package pktgen

// QueuePin is a tuned TX queue and the CPU its IRQ is pinned to.
type QueuePin struct{ Queue, CPU int }

// Slot is a place a send's stream can run: the kpktgend thread (or the
// userspace sending thread) of CPU, on TX queue Queue when the host's
// queues were tuned (-1: none, the CPU's own queue as XPS maps it).
type Slot struct{ CPU, Queue int }

// Slots are the places a send's streams may run on a host, the one
// rule every sender uses (the coordinator's thread plan, the agent's
// defaults and `linerate send`): one per tuned queue of pins (in the
// order of pins; a queue listed again, a second IRQ of it, adds none), and one
// per CPU: a queue whose IRQ shares a CPU with an earlier queue's adds
// none, unless perQueue. perQueue is the kernel backend's layout, one
// stream per entry and several on one kpktgend thread when each has its
// own queue (4 queues on CPUs 2, 3, 2, 3: entries 2q0, 3q1, 2q2, 3q3 on
// two threads), so that every queue sends — paced only (KernelPerQueue);
// the userspace backends run one thread per CPU, which sends on the
// queue its CPU maps to. Without
// pins the slots are the untuned CPUs, one each without a queue, and
// without those CPU 0: a send always has a place.
func Slots(pins []QueuePin, untuned []int, perQueue bool) []Slot {
	var out []Slot
	seenQ, seenCPU := map[int]bool{}, map[int]bool{}
	for _, p := range pins {
		if !seenQ[p.Queue] && (perQueue || !seenCPU[p.CPU]) {
			seenQ[p.Queue], seenCPU[p.CPU] = true, true
			out = append(out, Slot{CPU: p.CPU, Queue: p.Queue})
		}
	}
	if len(out) == 0 {
		for _, c := range untuned {
			out = append(out, Slot{CPU: c, Queue: -1})
		}
	}
	if len(out) == 0 {
		out = []Slot{{CPU: 0, Queue: -1}}
	}
	return out
}

// KernelPerQueue tells whether kernel pktgen's streams are one per tuned
// queue (Slots' perQueue), several devices on one CPU's kpktgend thread:
// only when the send is paced. A thread sends each turn from its running
// device with the earliest next transmit time (the kernel's next_to_run),
// and only a delay moves a device's on, so unpaced the first device keeps
// the thread and the others of it send nothing until it ends (in a run of
// a duration, nothing at all). Unpaced, a thread has one device, on its
// CPU's first queue.
func KernelPerQueue(kernel, paced bool) bool { return kernel && paced }

// SlotLists are slots as a Config takes them: the CPU of each stream,
// and its queue, or no queues when the slots have none (untuned).
func SlotLists(slots []Slot) (cpus, queues []int) {
	for _, s := range slots {
		cpus = append(cpus, s.CPU)
		if s.Queue >= 0 {
			queues = append(queues, s.Queue)
		}
	}
	if len(queues) != len(cpus) {
		queues = nil
	}
	return cpus, queues
}
