package doctor

import (
	"bufio"
	"bytes"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/linerate/linerate/topology/cpuset"
)

const cpuDir = "/sys/devices/system/cpu"

// idleLatencyMaxUs is the deepest idle state's exit latency a planned CPU
// may keep enabled, in µs. A receive ring of 512 descriptors holds about
// 34 µs of 64-byte frames at 10 GbE line rate (14.88 Mpps): a CPU that
// takes more than 20 µs to wake after a pause in the traffic (a trial's
// start, a burst) can lose frames at the ring before it runs. C1 and C1E
// (1-10 µs on Intel and AMD) stay below; C3, C6 and AMD's C2 (tens to
// hundreds of µs) are above.
const idleLatencyMaxUs = 20

func governorPath(cpu int) string {
	return fmt.Sprintf("%s/cpu%d/cpufreq/scaling_governor", cpuDir, cpu)
}

// governors reads the scaling governor of each planned CPU. cpufreq is
// false when no planned CPU has a cpufreq directory (a VM, a fixed clock).
func governors(e *env) (gov map[int]string, bad []string, cpufreq bool) {
	gov = map[int]string{}
	for _, cpu := range e.cpus.CPUs() {
		if _, err := e.h.Root.Stat(fmt.Sprintf("%s/cpu%d/cpufreq", cpuDir, cpu)); err != nil {
			continue
		}
		cpufreq = true
		g, err := e.read(governorPath(cpu))
		if err != nil {
			bad = append(bad, unreadable(governorPath(cpu), err))
			continue
		}
		gov[cpu] = g
	}
	return gov, bad, cpufreq
}

const governorWhy = "A governor other than performance lowers the clock of a CPU it sees idle and raises it only after load shows up: " +
	"the first seconds of a trial, or every trial of a search, run at another speed, and the rate a host sustains changes with it."

// checkGovernor: the planned CPUs' cpufreq governor.
func checkGovernor(e *env) Check {
	c := Check{Title: "CPU frequency governor of the planned CPUs", Why: governorWhy, Volatile: true}
	gov, bad, cpufreq := governors(e)
	if !cpufreq {
		c.Status = Pass
		c.Evidence = []string{fmt.Sprintf("%s/%s/cpufreq: absent: no frequency scaling exposed (a VM or fixed clock)", cpuDir, cpuGlob(e.cpus))}
		return c
	}
	// The findings (a slow governor, one that cannot be read) lead the
	// evidence: the report shows a WARN's first item.
	var findings []string
	if s, err := e.read(cpuDir + "/cpu" + strconv.Itoa(e.cpus.CPUs()[0]) + "/cpufreq/scaling_driver"); err == nil {
		c.Evidence = append(c.Evidence, fmt.Sprintf("%s/cpu%d/cpufreq/scaling_driver: %s", cpuDir, e.cpus.CPUs()[0], s))
	}
	var slow []int
	for _, cpu := range e.cpus.CPUs() {
		g, ok := gov[cpu]
		if !ok {
			continue
		}
		if g != "performance" {
			slow = append(slow, cpu)
			findings = append(findings, fmt.Sprintf("cpu%d: governor %s (%s)", cpu, g, governorPath(cpu)))
			continue
		}
		c.Evidence = append(c.Evidence, fmt.Sprintf("%s: %s", governorPath(cpu), g))
	}
	c.Evidence = append(append(findings, bad...), c.Evidence...)
	switch {
	case len(slow) > 0:
		c.Status = Warn
		set := cpuset.Of(slow...)
		c.Fix = fmt.Sprintf("for c in %s; do echo performance > %s/cpu$c/cpufreq/scaling_governor; done   (or: cpupower -c %s frequency-set -g performance)",
			strings.ReplaceAll(intList(slow), ",", ""), cpuDir, set)
		c.FixClass = FixGovernor
	case len(bad) > 0:
		c.Status = Warn
	default:
		c.Status = Pass
	}
	return c
}

// fixGovernor sets each planned CPU's governor to performance, journaled
// before each write.
func fixGovernor(e *env, j *journaler) error {
	gov, _, _ := governors(e)
	for _, cpu := range e.cpus.CPUs() {
		if g, ok := gov[cpu]; ok && g != "performance" {
			if err := j.file(e, governorPath(cpu), "performance"); err != nil {
				return err
			}
		}
	}
	return nil
}

var idleWhy = fmt.Sprintf("A CPU in a deep idle state takes its exit latency to run again: above %d µs a receive ring fills at line rate "+
	"(512 descriptors hold 34 µs of 64-byte frames at 10 GbE) before the CPU drains it, so a pause in the traffic costs frames.", idleLatencyMaxUs)

// checkIdle: deep idle states enabled on the planned CPUs.
func checkIdle(e *env) Check {
	c := Check{Title: "CPU idle states of the planned CPUs", Why: idleWhy, Status: Pass}
	var writes []string
	// findings lead the evidence: the report shows a WARN's first item.
	var findings []string
	exposed := false
	for _, cpu := range e.cpus.CPUs() {
		dir := fmt.Sprintf("%s/cpu%d/cpuidle", cpuDir, cpu)
		ents, err := e.h.Root.ReadDir(dir)
		if err != nil {
			if !absent(err) {
				c.Status = Warn
				findings = append(findings, unreadable(dir, err))
			}
			continue
		}
		exposed = true
		var states []string
		for _, ent := range ents {
			if strings.HasPrefix(ent.Name(), "state") {
				states = append(states, ent.Name())
			}
		}
		sort.Slice(states, func(i, j int) bool { return stateNum(states[i]) < stateNum(states[j]) })
		var deep, all []string
		for _, st := range states {
			base := dir + "/" + st
			name, _ := e.read(base + "/name")
			lat, lerr := e.read(base + "/latency")
			dis, _ := e.read(base + "/disable")
			us, err := strconv.Atoi(lat)
			if lerr != nil || err != nil {
				c.Status = Warn
				findings = append(findings, fmt.Sprintf("%s/latency: not readable (%v %v)", base, lerr, err))
				continue
			}
			on := dis != "1"
			all = append(all, fmt.Sprintf("%s %s %d µs %s", st, name, us, map[bool]string{true: "enabled", false: "disabled"}[on]))
			if on && us > idleLatencyMaxUs {
				deep = append(deep, fmt.Sprintf("%s (%s, %d µs)", st, name, us))
				writes = append(writes, fmt.Sprintf("echo 1 > %s/disable", base))
			}
		}
		c.Evidence = append(c.Evidence, fmt.Sprintf("%s/state*/{name,latency,disable}: %s", dir, strings.Join(all, "; ")))
		if len(deep) > 0 {
			c.Status = Warn
			findings = append(findings, fmt.Sprintf("cpu%d: enabled idle states with exit latency above %d µs: %s", cpu, idleLatencyMaxUs, strings.Join(deep, ", ")))
		}
	}
	if !exposed && c.Status == Pass {
		c.Evidence = append(c.Evidence, fmt.Sprintf("%s/%s/cpuidle: absent: no idle states exposed (a VM or a kernel without cpuidle); the CPUs idle in the hypervisor's or the default halt", cpuDir, cpuGlob(e.cpus)))
	}
	c.Evidence = append(findings, c.Evidence...)
	if len(writes) > 0 {
		c.Fix = strings.Join(writes, "\n") + fmt.Sprintf("\n(until the next boot; to keep it, boot with processor.max_cstate=1 intel_idle.max_cstate=1, or cpuidle.off=1; or hold /dev/cpu_dma_latency open at %d during the run)", idleLatencyMaxUs)
	}
	return c
}

func stateNum(s string) int {
	n, _ := strconv.Atoi(strings.TrimPrefix(s, "state"))
	return n
}

// cpuFacts fills the CPU model, microcode and governor of the planned CPUs.
func cpuFacts(e *env, f *Facts) {
	if b, err := e.h.Root.ReadFile("/proc/cpuinfo"); err == nil {
		sc := bufio.NewScanner(bytes.NewReader(b))
		for sc.Scan() {
			k, v, ok := strings.Cut(sc.Text(), ":")
			if !ok {
				continue
			}
			k, v = strings.TrimSpace(k), strings.TrimSpace(v)
			switch {
			case f.CPUModel == "" && (k == "model name" || k == "Model" || k == "cpu model"):
				f.CPUModel = v
			case f.Microcode == "" && k == "microcode":
				f.Microcode = v
			}
		}
	}
	gov, _, cpufreq := governors(e)
	if !cpufreq {
		f.Governor = "none"
		return
	}
	byGov := map[string]cpuset.Set{}
	for cpu, g := range gov {
		byGov[g] = byGov[g].Union(cpuset.Of(cpu))
	}
	var parts []string
	for g, cpus := range byGov {
		parts = append(parts, g+" "+cpus.String())
	}
	sort.Strings(parts)
	if len(byGov) == 1 {
		for g := range byGov {
			parts = []string{g}
		}
	}
	f.Governor = strings.Join(parts, "; ")
}
