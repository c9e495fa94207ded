package topology

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/linerate/linerate/internal/enum"
	"github.com/linerate/linerate/topology/cpuset"
)

// IRQBalance is what Apply does when irqbalance runs, as `linerate irq
// apply --irqbalance`, a run's spec and an agent's Tune give it.
type IRQBalance string

// irqbalance policies for Apply.
const (
	IRQBalanceRefuse IRQBalance = "refuse" // the default
	IRQBalanceIgnore IRQBalance = "ignore"
)

// IRQBalancePolicies lists every valid policy, the default first: the one
// list every validator, error and flag help says.
var IRQBalancePolicies = []IRQBalance{IRQBalanceRefuse, IRQBalanceIgnore}

// Check is nil when b is one of IRQBalancePolicies; otherwise it names b
// and the valid policies, for the caller to prefix with its field.
func (b IRQBalance) Check() error {
	if slices.Contains(IRQBalancePolicies, b) {
		return nil
	}
	return fmt.Errorf("%q: valid values are %s", b, enum.And(IRQBalancePolicies))
}

// Meaning is what the policy does, for help texts.
func (b IRQBalance) Meaning() string {
	switch b {
	case IRQBalanceRefuse:
		return "stop with advice"
	case IRQBalanceIgnore:
		return "pin and warn"
	}
	return ""
}

// ErrIRQBalance is returned when irqbalance runs and would move pinned
// IRQs back.
var ErrIRQBalance = errors.New("irqbalance is running")

// IRQBalancePIDs returns the pids of running irqbalance processes, found
// by their comm in <root>/proc; none when /proc cannot be listed (a tune
// reads the live host's, which always can; doctor, which reads snapshots
// too, asks ProcessesNamed and says so).
func IRQBalancePIDs(r Root) []int {
	var pids []int
	procs, _ := ProcessesNamed(r, "irqbalance")
	for _, p := range procs {
		pids = append(pids, p.PID)
	}
	return pids
}

// checkIRQBalance applies the irqbalance policy: an error for "refuse"
// (naming the exact settings that make irqbalance leave these IRQs alone),
// a warning for "ignore".
func checkIRQBalance(r Root, p *Plan, policy IRQBalance) (string, error) {
	if err := policy.Check(); err != nil {
		return "", fmt.Errorf("--irqbalance %w", err)
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
