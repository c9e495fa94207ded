package doctor

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strconv"
	"strings"

	"github.com/linerate/linerate/topology/cpuset"
	"github.com/linerate/linerate/topology/irqname"
)

// testQueue is one rx or tx queue of the interface the run uses, and the
// CPUs its packets should be handled on: the CPU its IRQ is planned on,
// or, for an interface without queue IRQs (a veth), every CPU the run uses.
type testQueue struct {
	dir     string // "rx" or "tx", as in queues/rx-N
	n       int
	planned cpuset.Set
}

func (q testQueue) path(e *env, attr string) string {
	return fmt.Sprintf("/sys/class/net/%s/queues/%s-%d/%s", e.o.Iface, q.dir, q.n, attr)
}

// testQueues are the interface's queues of one direction the run uses:
// those the plan pins, or every queue when there is no plan.
func testQueues(e *env, dir string) []testQueue {
	byQueue := map[int]cpuset.Set{}
	if e.plan != nil {
		for _, a := range e.plan.Assignments {
			if a.Dir == irqname.TxRx || string(a.Dir) == dir {
				byQueue[a.Queue] = byQueue[a.Queue].Union(cpuset.Of(a.CPU))
			}
		}
	} else {
		ents, _ := e.h.Root.ReadDir("/sys/class/net/" + e.o.Iface + "/queues")
		for _, ent := range ents {
			if n, err := strconv.Atoi(strings.TrimPrefix(ent.Name(), dir+"-")); err == nil && strings.HasPrefix(ent.Name(), dir+"-") {
				byQueue[n] = e.cpus
			}
		}
	}
	out := make([]testQueue, 0, len(byQueue))
	for n, cpus := range byQueue {
		out = append(out, testQueue{dir: dir, n: n, planned: cpus})
	}
	slices.SortFunc(out, func(a, b testQueue) int { return a.n - b.n })
	return out
}

// unreadable is the evidence of a file that could not be read: "absent"
// when it does not exist (the same on a live host, a fixture and a
// snapshot), else the error.
func unreadable(name string, err error) string {
	if absent(err) {
		return name + ": absent"
	}
	return fmt.Sprintf("%s: not readable (%v)", name, err)
}

// absent is true when err says a file does not exist.
func absent(err error) bool { return errors.Is(err, fs.ErrNotExist) }

// readMask reads a queue's CPU mask; ok is false when the file is absent
// (a kernel without CONFIG_RPS or CONFIG_XPS, xps_cpus of a one-queue
// device) or unreadable, with its evidence either way.
func readMask(e *env, name string) (cpuset.Set, string, bool) {
	s, err := e.read(name)
	if err != nil {
		return cpuset.Set{}, unreadable(name, err), false
	}
	m, err := cpuset.ParseMask(s)
	if err != nil {
		return cpuset.Set{}, fmt.Sprintf("%s: %s: not a CPU mask (%v)", name, s, err), false
	}
	return m, fmt.Sprintf("%s: %s", name, s), true
}

const steeringWhy = "Pinning puts each queue on one CPU; RPS, RFS or XPS steering the same packets to other CPUs splits the work again, " +
	"adds inter-processor interrupts and moves drops from the NIC to backlogs the run does not count as the switch's."

// checkSteering: RPS, RFS and XPS settings that fight the pinning. What
// fights:
//   - RPS on a receiving test queue whose mask has a CPU other than the
//     queue's planned CPU: the planned CPU hands packets to another CPU's
//     backlog (an IPI each batch, drops counted in softnet_stat, not at the
//     NIC). An all-zero mask is RPS off; a mask of exactly the planned CPU
//     only adds a hop on the same CPU and is left alone.
//   - RFS (rps_sock_flow_entries and a test queue's rps_flow_cnt both
//     non-zero): it steers a flow hash to the CPU that last read a socket
//     of that hash, whatever the pinning, even with rps_cpus all zero.
//   - XPS on a sending test queue whose mask has another planned CPU: a
//     sender thread on that CPU would transmit on this queue, whose
//     completions fire on another CPU (xps_rxqs likewise with another rx
//     queue's number).
func checkSteering(e *env) Check {
	c := Check{Title: "RPS, RFS and XPS against the pinning", Why: steeringWhy, Status: Pass}
	var fixes []string
	// findings lead the evidence: the report shows a WARN's first item.
	var findings []string
	rps, rfs := false, false
	if e.o.Role.receives() {
		entries := 0
		name := "/proc/sys/net/core/rps_sock_flow_entries"
		if s, err := e.read(name); err == nil {
			entries, _ = strconv.Atoi(s)
			c.Evidence = append(c.Evidence, name+": "+s)
		} else {
			c.Evidence = append(c.Evidence, unreadable(name, err)+": RFS off")
		}
		for _, q := range testQueues(e, "rx") {
			m, ev, ok := readMask(e, q.path(e, "rps_cpus"))
			c.Evidence = append(c.Evidence, ev)
			if ok && !m.IsEmpty() && !m.IsSubsetOf(q.planned) {
				c.Status, rps = Warn, true
				findings = append(findings, fmt.Sprintf("rx-%d: RPS steers to CPUs %s, the queue is planned on %s", q.n, m, q.planned))
				fixes = append(fixes, fmt.Sprintf("echo 0 > %s", q.path(e, "rps_cpus")))
			}
			if entries <= 0 {
				continue
			}
			flows, err := e.read(q.path(e, "rps_flow_cnt"))
			if err != nil {
				continue
			}
			c.Evidence = append(c.Evidence, q.path(e, "rps_flow_cnt")+": "+flows)
			if n, _ := strconv.Atoi(flows); n > 0 {
				c.Status, rfs = Warn, true
				findings = append(findings, fmt.Sprintf("rx-%d: RFS on (%d flows, %d socket flow entries): flows go to the CPU that last read them", q.n, n, entries))
				fixes = append(fixes, fmt.Sprintf("echo 0 > %s", q.path(e, "rps_flow_cnt")))
			}
		}
		if rfs {
			fixes = append(fixes, "echo 0 > "+name)
		}
	} else {
		c.Evidence = append(c.Evidence, "RPS and RFS: not checked, the host only sends")
	}
	if e.o.Role.sends() {
		planned := cpuset.Set{}
		queues := testQueues(e, "tx")
		for _, q := range queues {
			planned = planned.Union(q.planned)
		}
		for _, q := range queues {
			m, ev, ok := readMask(e, q.path(e, "xps_cpus"))
			c.Evidence = append(c.Evidence, ev)
			if other := m.Intersect(planned).Difference(q.planned); ok && e.plan != nil && !other.IsEmpty() {
				c.Status = Warn
				findings = append(findings, fmt.Sprintf("tx-%d: XPS sends from CPUs %s on this queue, whose IRQ is planned on %s", q.n, other, q.planned))
				fixes = append(fixes, fmt.Sprintf("echo %s > %s", q.planned.Mask(e.nic.NrCPUs), q.path(e, "xps_cpus")))
			}
			rxqs, ev, ok := readMask(e, q.path(e, "xps_rxqs"))
			c.Evidence = append(c.Evidence, ev)
			if other := rxqs.Difference(cpuset.Of(q.n)); ok && !other.IsEmpty() {
				c.Status = Warn
				findings = append(findings, fmt.Sprintf("tx-%d: XPS maps rx queues %s to this tx queue", q.n, other))
				fixes = append(fixes, fmt.Sprintf("echo 0 > %s", q.path(e, "xps_rxqs")))
			}
		}
	} else {
		c.Evidence = append(c.Evidence, "XPS: not checked, the host only receives")
	}
	if c.Status == Pass {
		findings = []string{"no RPS, RFS or XPS setting of the test queues fights the pinning"}
	}
	c.Evidence = append(findings, c.Evidence...)
	c.Fix = strings.Join(fixes, "\n")
	if rps {
		c.FixClass = FixRPS // --fix rps writes the rps_cpus lines; the rest is the operator's
	}
	return c
}

// fixRPS turns RPS off (rps_cpus all zero) on every receiving test queue
// where it steers off the queue's planned CPU, each write journaled
// before it is made.
func fixRPS(e *env, j *journaler) error {
	for _, q := range testQueues(e, "rx") {
		name := q.path(e, "rps_cpus")
		m, _, ok := readMask(e, name)
		// A mask of the queue's planned CPU alone does not fight the
		// pinning (the check passes it): it is left as it is.
		if !ok || m.IsEmpty() || m.IsSubsetOf(q.planned) {
			continue
		}
		if err := j.file(e, name, "0"); err != nil {
			return err
		}
	}
	return nil
}
