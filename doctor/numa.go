package doctor

import (
	"fmt"
	"strings"
)

// nodeCount is the number of NUMA nodes under /sys/devices/system/node
// (0 when it cannot be read: a kernel without CONFIG_NUMA).
func nodeCount(e *env) int {
	ents, err := e.h.Root.ReadDir("/sys/devices/system/node")
	if err != nil {
		return 0
	}
	n := 0
	for _, ent := range ents {
		if rest, ok := strings.CutPrefix(ent.Name(), "node"); ok && rest != "" && strings.Trim(rest, "0123456789") == "" {
			n++
		}
	}
	return n
}

const numaWhy = "A CPU on another node reaches the NIC's rings and DMA buffers across the interconnect: every packet costs a remote memory access, " +
	"and the rate falls by a share that depends on the host, not on the device under test."

// checkNUMA: the NIC's NUMA node against the CPUs the run will use.
func checkNUMA(e *env) Check {
	c := Check{Title: "the NIC's NUMA node against the run's CPUs", Why: numaWhy}
	switch {
	case e.virtual():
		c.Status = Pass
		c.Evidence = []string{fmt.Sprintf("/sys/class/net/%s/device: absent: a virtual interface, on no NUMA node", e.o.Iface)}
		return c
	case e.nic == nil:
		c.Status = Warn
		c.Evidence = []string{fmt.Sprintf("%s: cannot be inspected (%v)", e.o.Iface, e.nicErr)}
		return c
	}
	nodes := nodeCount(e)
	node := fmt.Sprintf("%s/numa_node: %d", e.nic.DevPath, e.nic.NUMANode)
	cpus := fmt.Sprintf("the NIC's local CPUs: %s; the run's CPUs: %s", e.nic.LocalCPUs, e.cpus)
	pass := func(verdict string) Check {
		c.Status = Pass
		c.Evidence = []string{verdict, node, cpus}
		return c
	}
	switch {
	case nodes <= 1:
		return pass(fmt.Sprintf("/sys/devices/system/node: %d node: a single node, every CPU is local", nodes))
	case e.nic.NUMANode < 0:
		return pass(fmt.Sprintf("/sys/devices/system/node: %d nodes, but the firmware gives %s no node: every online CPU counts as local", nodes, e.nic.DevPath))
	}
	off := e.cpus.Difference(e.nic.LocalCPUs)
	usable := e.nic.LocalCPUs.Difference(e.nic.Isolated)
	if off.IsEmpty() {
		return pass(fmt.Sprintf("the run's CPUs %s are all on node %d, the NIC's", e.cpus, e.nic.NUMANode))
	}
	if usable.IsEmpty() {
		return pass(fmt.Sprintf("CPUs %s are off node %d, which has no online, unisolated CPU: the run cannot do better", off, e.nic.NUMANode))
	}
	c.Evidence = []string{fmt.Sprintf("CPUs %s are off node %d", off, e.nic.NUMANode), node, cpus}
	c.Status = Fail
	c.Fix = fmt.Sprintf("run on node %d's CPUs: --cpus %s (or leave --cpus out: the plan takes the NIC's local CPUs)", e.nic.NUMANode, usable)
	return c
}
