package topology

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/linerate/linerate/topology/cpuset"
)

// irqbalance policies for Apply.
const (
	IRQBalanceRefuse = "refuse"
	IRQBalanceIgnore = "ignore"
)

// ErrIRQBalance is returned when irqbalance runs and would move pinned
// IRQs back.
var ErrIRQBalance = errors.New("irqbalance is running")

// IRQBalancePIDs returns the pids of running irqbalance processes, found
// by their comm in <root>/proc.
func IRQBalancePIDs(r Root) []int {
	ents, err := r.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if comm, err := readString(r, "/proc/"+e.Name()+"/comm"); err == nil && comm == "irqbalance" {
			pids = append(pids, pid)
		}
	}
	sort.Ints(pids)
	return pids
}

// checkIRQBalance applies the irqbalance policy: an error for "refuse"
// (naming the exact settings that make irqbalance leave these IRQs alone),
// a warning for "ignore".
func checkIRQBalance(r Root, p *Plan, policy string) (string, error) {
	switch policy {
	case IRQBalanceRefuse, IRQBalanceIgnore:
	default:
		return "", fmt.Errorf("--irqbalance %q: valid values are %q and %q", policy, IRQBalanceRefuse, IRQBalanceIgnore)
	}
	pids := IRQBalancePIDs(r)
	if len(pids) == 0 {
		return "", nil
	}
	if policy == IRQBalanceIgnore {
		return fmt.Sprintf("irqbalance is running (pid %v) and may move these IRQs back; re-check with `linerate irq verify`", pids), nil
	}
	var ban []string
	var cpus cpuset.Set
	for _, a := range p.Assignments {
		ban = append(ban, fmt.Sprintf("--banirq=%d", a.IRQ))
		cpus = cpus.Union(cpuset.Of(a.CPU))
	}
	return "", fmt.Errorf("apply %s: %w (pid %v) and would move the pinned IRQs back. Either stop it (systemctl stop irqbalance), "+
		"or make it leave them alone: in /etc/default/irqbalance (Debian) or /etc/sysconfig/irqbalance (RHEL) set\n"+
		"  IRQBALANCE_ARGS=\"%s\"\n  IRQBALANCE_BANNED_CPULIST=%s\nand restart irqbalance; or pass --irqbalance=ignore to pin anyway",
		p.NIC.Iface, ErrIRQBalance, pids, strings.Join(ban, " "), cpus)
}
