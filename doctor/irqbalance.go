package doctor

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/linerate/linerate/topology"
	"github.com/linerate/linerate/topology/cpuset"
)

// irqbalanceArgs is what one irqbalance process was told: the IRQs it
// leaves alone (--banirq, -i), the module or name substrings it leaves
// alone (--banmod, -m), the policy script that may ban more, and the CPUs
// it keeps IRQs off (IRQBALANCE_BANNED_CPULIST, or the older hex
// IRQBALANCE_BANNED_CPUS).
type irqbalanceArgs struct {
	banIRQs    []int
	banMods    []string
	policy     string
	bannedCPUs string
}

// parseIRQBalance reads the banning options of irqbalance's command line
// (NUL-separated, as /proc/PID/cmdline) and environment (/proc/PID/environ).
// It knows the long forms with "=" or a separate value and the short forms
// with an attached or separate value, as irqbalance's getopt_long does.
func parseIRQBalance(cmdline, environ []byte) irqbalanceArgs {
	var a irqbalanceArgs
	args := strings.Split(strings.TrimRight(string(cmdline), "\x00\n"), "\x00")
	value := func(i *int, arg, long, short string) (string, bool) {
		switch {
		case strings.HasPrefix(arg, long+"="):
			return strings.TrimPrefix(arg, long+"="), true
		case arg == long || arg == short:
			if *i+1 < len(args) {
				*i++
				return args[*i], true
			}
			return "", false
		case short != "" && strings.HasPrefix(arg, short) && len(arg) > len(short):
			return strings.TrimPrefix(arg, short), true
		}
		return "", false
	}
	for i := 1; i < len(args); i++ {
		arg := args[i]
		if v, ok := value(&i, arg, "--banirq", "-i"); ok {
			if n, err := strconv.Atoi(v); err == nil {
				a.banIRQs = append(a.banIRQs, n)
			}
		} else if v, ok := value(&i, arg, "--banmod", "-m"); ok {
			a.banMods = append(a.banMods, v)
		} else if v, ok := value(&i, arg, "--policyscript", "-l"); ok {
			a.policy = v
		}
	}
	for _, kv := range bytes.Split(environ, []byte{0}) {
		k, v, _ := strings.Cut(string(kv), "=")
		switch {
		case k == "IRQBALANCE_BANNED_CPULIST" && v != "":
			a.bannedCPUs = v
		case k == "IRQBALANCE_BANNED_CPUS" && v != "" && a.bannedCPUs == "":
			if s, err := cpuset.ParseMask(v); err == nil {
				a.bannedCPUs = s.String()
			}
		}
	}
	return a
}

// bans says whether a leaves the queue IRQ v alone: banned by number, or
// by a --banmod substring of its driver or its name (check_for_module_ban).
func (a irqbalanceArgs) bans(v topology.Vector, driver string) bool {
	if slices.Contains(a.banIRQs, v.IRQ) {
		return true
	}
	for _, m := range a.banMods {
		if m != "" && (strings.Contains(driver, m) || strings.Contains(v.Name, m)) {
			return true
		}
	}
	return false
}

const irqbalanceWhy = "irqbalance rewrites IRQ affinities every 10 s: it moves the pinned queue IRQs back onto other CPUs in the middle of a run, " +
	"so a queue's packets change CPU and the count measures the move, not the device under test."

// checkIRQBalance: irqbalance running and not leaving the interface's
// queue IRQs alone. A run's tune refuses a running irqbalance under the
// default policy (topology/irqbalance.go) unless it bans every IRQ the
// plan pins, so that is a FAIL here too; under "ignore" it is a WARN.
func checkIRQBalance(e *env) Check {
	c := Check{Title: "irqbalance running and banning the queue IRQs", Why: irqbalanceWhy, Volatile: true}
	procs, err := topology.ProcessesNamed(e.h.Root, "irqbalance")
	if err != nil {
		c.Status = Warn
		c.Evidence = []string{fmt.Sprintf("/proc/*/comm: cannot list /proc (%v): whether irqbalance runs is unknown", err)}
		c.Fix = "pgrep -a irqbalance on the host itself, or run linerate doctor there (--root /)"
		return c
	}
	var pids []int
	for _, p := range procs {
		pids = append(pids, p.PID)
	}
	if len(pids) == 0 {
		c.Status = Pass
		c.Evidence = []string{"/proc/*/comm: no process named irqbalance"}
		return c
	}
	bad := Fail
	if e.o.IRQBalance == topology.IRQBalanceIgnore {
		bad = Warn
	}
	var vectors []topology.Vector
	driver := ""
	if e.plan != nil {
		driver = e.nic.Driver
		for _, a := range e.plan.Assignments {
			vectors = append(vectors, a.Vector)
		}
	}
	var unbanned []int
	var policies []string
	for _, pid := range pids {
		base := fmt.Sprintf("/proc/%d/", pid)
		cmdline, err := e.h.Root.ReadFile(base + "cmdline")
		if err != nil {
			c.Status = Warn.Worse(bad)
			c.Evidence = append(c.Evidence, fmt.Sprintf("irqbalance pid %d: %scmdline: not readable (%v)", pid, base, err))
			continue
		}
		environ, err := e.h.Root.ReadFile(base + "environ")
		if err != nil {
			c.Evidence = append(c.Evidence, fmt.Sprintf("irqbalance pid %d: %senviron: not readable (%v): its banned CPUs are unknown", pid, base, err))
		}
		a := parseIRQBalance(cmdline, environ)
		c.Evidence = append(c.Evidence, fmt.Sprintf("irqbalance pid %d: %scmdline: %s", pid, base, strings.Join(strings.Split(strings.TrimRight(string(cmdline), "\x00\n"), "\x00"), " ")))
		if a.bannedCPUs != "" {
			c.Evidence = append(c.Evidence, fmt.Sprintf("irqbalance pid %d: %senviron: banned CPUs %s", pid, base, a.bannedCPUs))
		}
		if a.policy != "" {
			policies = append(policies, a.policy)
		}
		for _, v := range vectors {
			if !a.bans(v, driver) && !slices.Contains(unbanned, v.IRQ) {
				unbanned = append(unbanned, v.IRQ)
			}
		}
	}
	switch {
	case e.plan == nil:
		why := "no plan of its queue IRQs"
		if e.nicErr != nil {
			why = e.nicErr.Error()
		}
		c.Evidence = append([]string{fmt.Sprintf("irqbalance pid %s runs: %s has no queue IRQs to ban (%s); a run's tune refuses a running irqbalance under --irqbalance %s all the same", intList(pids), e.o.Iface, why, topology.IRQBalanceRefuse)}, c.Evidence...)
		c.Status = c.Status.Worse(bad)
	case len(unbanned) == 0:
		c.Evidence = append(c.Evidence, fmt.Sprintf("every queue IRQ of %s is banned (%d)", e.o.Iface, len(vectors)))
		if c.Status == "" {
			c.Status = Pass
		}
		return c
	case len(policies) > 0:
		c.Evidence = append([]string{fmt.Sprintf("irqbalance pid %s: queue IRQs %s not banned on the command line; policy script %s may ban them, which doctor cannot judge without running it", intList(pids), intList(unbanned), strings.Join(policies, ", "))}, c.Evidence...)
		c.Status = c.Status.Worse(Warn)
	default:
		c.Evidence = append([]string{fmt.Sprintf("irqbalance pid %s does not ban queue IRQs %s of %s (no --banirq, -i or --banmod for them)", intList(pids), intList(unbanned), e.o.Iface)}, c.Evidence...)
		c.Status = c.Status.Worse(bad)
	}
	c.Fix = irqbalanceFix(e, pids, len(policies) > 0)
	return c
}

// irqbalanceFix words the fix both ways, as topology's refusal does: stop
// irqbalance, or make it leave these IRQs (and CPUs) alone.
func irqbalanceFix(e *env, pids []int, policy bool) string {
	if e.plan == nil {
		return "systemctl stop irqbalance (a run's tune refuses it while it runs), or run with --irqbalance ignore"
	}
	var ban []string
	var cpus cpuset.Set
	for _, a := range e.plan.Assignments {
		ban = append(ban, fmt.Sprintf("--banirq=%d", a.IRQ))
		cpus = cpus.Union(cpuset.Of(a.CPU))
	}
	fix := fmt.Sprintf("systemctl stop irqbalance; or make it leave these IRQs alone: in /etc/default/irqbalance (Debian) or /etc/sysconfig/irqbalance (RHEL) set\n"+
		"  IRQBALANCE_ARGS=\"%s\"\n  IRQBALANCE_BANNED_CPULIST=%s\nand restart irqbalance (pid %v)", strings.Join(ban, " "), cpus, pids)
	if policy {
		fix += "; or make its policy script print ban=true for these IRQs"
	}
	return fix
}

// intList is "24, 25, 26".
func intList(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ", ")
}
