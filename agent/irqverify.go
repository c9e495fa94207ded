package agent

import (
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/linerate/linerate/topology"
	"github.com/linerate/linerate/topology/cpuset"
	"github.com/linerate/linerate/topology/interrupts"
	"github.com/linerate/linerate/topology/irqname"
)

// irqVerifier tells where a run's queue IRQs fired: it reads
// /proc/interrupts through the agent's root when the run's traffic starts
// and after it ends (before any restore), and compares the two reads with
// the plan the run applied (topology.Compare).
type irqVerifier struct {
	root     topology.Root
	stateDir string
	log      hclog.Logger
}

// irqSpan is a run's first read: the NIC's queue IRQs and their counts
// then, or why the run will have no verification.
type irqSpan struct {
	nic    *topology.NIC
	before *interrupts.Table
	at     time.Time
	reason string
}

// irqCheck is a run's verification, or why it has none.
type irqCheck struct {
	result *topology.VerifyResult
	reason string
}

// begin reads iface's queue IRQs and their counts now.
func (v *irqVerifier) begin(iface string) *irqSpan {
	nic, err := topology.Inspect(v.root, iface)
	switch {
	case errors.Is(err, topology.ErrNoDevice):
		return &irqSpan{reason: topology.NoQueueIRQs}
	case err != nil:
		return v.fail("inspect the NIC", iface, err)
	case len(nic.Vectors) == 0:
		return &irqSpan{reason: fmt.Sprintf("no queue IRQs found for %s (driver %s)", iface, nic.Driver)}
	}
	before, err := topology.ReadInterrupts(v.root)
	if err != nil {
		return v.fail("read the counts before the run", iface, err)
	}
	return &irqSpan{nic: nic, before: before, at: time.Now()}
}

// fail is a span without a verification because what it did failed.
func (v *irqVerifier) fail(what, iface string, err error) *irqSpan {
	v.log.Warn("queue IRQs not verified", "iface", iface, "step", what, "error", err)
	return &irqSpan{reason: fmt.Sprintf("not verified: %s %s: %v", what, iface, err)}
}

// end reads the counts again and compares them with the first read,
// planned CPUs from the journal of the run's tuning (none: the current
// affinities).
func (v *irqVerifier) end(s *irqSpan) irqCheck {
	if s == nil {
		return irqCheck{reason: "not verified: the run had no first read of /proc/interrupts"}
	}
	if s.nic == nil {
		return irqCheck{reason: s.reason}
	}
	after, err := topology.ReadInterrupts(v.root)
	if err != nil {
		return irqCheck{reason: v.fail("read the counts after the run", s.nic.Iface, err).reason}
	}
	j, err := topology.LoadJournal(v.stateDir, s.nic.Iface)
	if err != nil {
		// The plan is unknown: the affinities the first read saw stand in.
		v.log.Warn("tuning journal unreadable: queue IRQs verified against their affinities at the start", "iface", s.nic.Iface, "error", err)
		j = nil
	}
	res := topology.Compare(s.nic, j, s.before, after, time.Since(s.at))
	if res.OffCPU > 0 {
		v.log.Warn("queue IRQs fired off their planned CPUs", "iface", res.Iface, "irqs", res.OffCPU)
	}
	return irqCheck{result: res}
}

// queueCPUs are the CPUs iface's receive queue IRQs are pinned to now,
// one per queue in queue order: the run's plan once Tune applied it, where
// the afxdp receiver's readers go (receiver.Options.CPUs), each on the CPU
// whose softirq fills its queue. Nil when the NIC cannot be read, a queue
// has no IRQ of its own (a virtual device) or an affinity does not parse:
// the receiver's default then.
func (v *irqVerifier) queueCPUs(iface string) []int {
	nic, err := topology.Inspect(v.root, iface)
	if err != nil {
		return nil
	}
	byQueue := map[int]int{}
	for _, vec := range nic.Vectors {
		if _, ok := byQueue[vec.Queue]; ok || vec.Dir == irqname.Tx {
			continue
		}
		set, err := cpuset.ParseList(vec.Current, nic.NrCPUs)
		if err != nil || set.IsEmpty() {
			return nil
		}
		byQueue[vec.Queue] = set.CPUs()[0]
	}
	if len(byQueue) == 0 {
		return nil
	}
	out := make([]int, len(byQueue))
	for q := range out {
		c, ok := byQueue[q]
		if !ok {
			return nil
		}
		out[q] = c
	}
	return out
}
