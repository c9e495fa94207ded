package doctor

import (
	"bufio"
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/linerate/linerate/topology/cpuset"
)

// cpuGlob names the planned CPUs' sysfs directories: "cpu0", or
// "cpuN (N in 2-3)".
func cpuGlob(s cpuset.Set) string {
	if s.Len() == 1 {
		return fmt.Sprintf("cpu%d", s.CPUs()[0])
	}
	return fmt.Sprintf("cpuN (N in %s)", s)
}

// isolatedCPUs are isolcpus ∪ nohz_full, as topology reads them.
func isolatedCPUs(e *env) cpuset.Set {
	if e.nic != nil {
		return e.nic.Isolated
	}
	var out cpuset.Set
	for _, f := range []string{"isolated", "nohz_full"} {
		if s, err := e.read(cpuDir + "/" + f); err == nil && s != "" && s != "(null)" {
			if set, err := cpuset.ParseList(s, 0); err == nil {
				out = out.Union(set)
			}
		}
	}
	return out
}

// siblingsOf reads the hardware threads of cpu's core (itself included)
// and the file it read them from.
func siblingsOf(e *env, cpu int) (cpuset.Set, string, error) {
	base := fmt.Sprintf("%s/cpu%d/topology/", cpuDir, cpu)
	name := base + "core_cpus_list"
	s, err := e.read(name)
	if err != nil {
		name = base + "thread_siblings_list"
		if s, err = e.read(name); err != nil {
			return cpuset.Set{}, name, err
		}
	}
	set, err := cpuset.ParseList(s, 0)
	return set, name, err
}

// busyShares are each CPU's non-idle share of its time since boot, from
// the cpuN lines of /proc/stat (idle and iowait are idle).
func busyShares(e *env) (map[int]float64, error) {
	b, err := e.h.Root.ReadFile("/proc/stat")
	if err != nil {
		return nil, err
	}
	out := map[int]float64{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 6 || !strings.HasPrefix(f[0], "cpu") || f[0] == "cpu" {
			continue
		}
		cpu, err := strconv.Atoi(strings.TrimPrefix(f[0], "cpu"))
		if err != nil {
			continue
		}
		var total, idle float64
		for i, v := range f[1:] {
			n, _ := strconv.ParseFloat(v, 64)
			if i >= 8 { // guest and guest_nice are already in user and nice
				break
			}
			total += n
			if i == 3 || i == 4 {
				idle += n
			}
		}
		if total > 0 {
			out[cpu] = (total - idle) / total
		}
	}
	return out, nil
}

const smtWhy = "Two hardware threads share one core's execution units and caches: a busy sibling halves the core a queue or a sender thread " +
	"is pinned to, and the rate then depends on what else the host runs."

// smtBusyShare is the share of its time since boot above which an
// unplanned sibling is busy enough to WARN. An idle housekeeping thread
// (timers, RCU, an occasional daemon) stays at a few percent; above a
// tenth of the time something runs there regularly and will take the
// core's execution units during a run. Below it the sibling is evidence:
// there is nothing to act on.
const smtBusyShare = 0.10

// checkSMT: SMT siblings of the planned CPUs that are online and not
// isolated, so that anything else may run on them, judged by how busy
// each has been since boot.
func checkSMT(e *env) Check {
	c := Check{Title: "SMT siblings of the planned CPUs", Why: smtWhy}
	isolated := isolatedCPUs(e)
	busy, berr := busyShares(e)
	var found, planned cpuset.Set
	var findings, context []string
	for _, cpu := range e.cpus.CPUs() {
		sib, name, err := siblingsOf(e, cpu)
		if err != nil {
			c.Status = Warn
			findings = append(findings, unreadable(name, err))
			continue
		}
		others := sib.Difference(cpuset.Of(cpu)).Intersect(e.online).Difference(isolated)
		if others.IsEmpty() {
			continue
		}
		context = append(context, fmt.Sprintf("%s: %s", name, sib))
		planned = planned.Union(others.Intersect(e.cpus))
		found = found.Union(others.Difference(e.cpus))
	}
	if !planned.IsEmpty() {
		// The plan put queues on both threads of a core (more queues than
		// cores): the run's own work shares them, which it chose.
		context = append(context, fmt.Sprintf("siblings %s are planned CPUs themselves: the run's own queues share those cores (more queues than cores; fewer channels, ethtool -L, give each its core)", planned))
	}
	var busySibs cpuset.Set
	for _, s := range found.CPUs() {
		const what = "online, not isolated, not planned"
		switch b, ok := busy[s]; {
		case berr != nil:
			busySibs = busySibs.Union(cpuset.Of(s))
			findings = append(findings, fmt.Sprintf("cpu%d: %s, busy share unknown (%s)", s, what, unreadable("/proc/stat", berr)))
		case !ok:
			busySibs = busySibs.Union(cpuset.Of(s))
			findings = append(findings, fmt.Sprintf("cpu%d: %s, busy share unknown (no cpu%d line in /proc/stat)", s, what, s))
		case b > smtBusyShare:
			busySibs = busySibs.Union(cpuset.Of(s))
			findings = append(findings, fmt.Sprintf("cpu%d: %s, non-idle %.1f%% of its time since boot (/proc/stat), above %.0f%%", s, what, 100*b, 100*smtBusyShare))
		default:
			context = append(context, fmt.Sprintf("cpu%d: %s, but non-idle only %.1f%% of its time since boot (/proc/stat), at most %.0f%%: idle", s, what, 100*b, 100*smtBusyShare))
		}
	}
	if busySibs.IsEmpty() && c.Status == "" {
		c.Status = Pass
		if found.IsEmpty() && planned.IsEmpty() {
			context = append(context, fmt.Sprintf("%s/%s/topology: no online, unisolated SMT sibling: each planned CPU has its core to itself", cpuDir, cpuGlob(e.cpus)))
		}
	}
	c.Evidence = append(findings, context...)
	if busySibs.IsEmpty() {
		return c
	}
	c.Status = Warn
	c.Fix = fmt.Sprintf("echo off > %s/smt/control (SMT off until the next boot; nosmt on the kernel command line to keep it), "+
		"or keep other work off the siblings: boot with isolcpus=%s, or give the run --cpus without them", cpuDir, busySibs)
	return c
}
