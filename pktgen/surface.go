package pktgen

import (
	"errors"
	"slices"
)

// Copies is how many times kernel pktgen sends each sequence number: a
// built skb goes out clone_skb times (pktgen builds a new one when its
// clone counter, counted up on every transmit call after the first,
// reaches clone_skb: clone_skb 0 and 1 both send each skb once), and each
// transmit call sends it burst times (xmit_more). A receiver counting
// the run expects this many copies of every sequence (receiver
// Options.Repeats): none of them is a duplicate. pktgen's count counts
// every copy, the frames on the wire.
func (c *Config) Copies() int {
	return max(c.CloneSkb, 1) * max(c.Burst, 1)
}

// DeviceFacts are what a host knows of the device a kernel pktgen run
// sends from, beyond what pktgen's probe finds: its TX queues (0:
// unknown, a virtual device without a NIC topology) and the NUMA node of
// its device (-1: none, or unknown).
type DeviceFacts struct {
	TxQueues int
	NUMANode int
}

// KernelCheck refuses what the kernel backend cannot send of c on the
// device its probe found f on: burst and clone_skb without skb sharing
// (veth, lo, bonds: no IFF_TX_SKB_SHARING) unless c allows the fallback
// to burst 1 and clone_skb 0, a node for allocations (flag NODE or
// NODE_ALLOC) on a kernel with neither flag or a device with no node, a
// queue map beyond the device's TX queues. Each error names the field
// and what would be valid.
func (c *Config) KernelCheck(f *Features, d DeviceFacts) error {
	var errs []error
	if f == nil {
		f = &Features{}
	}
	if c.Burst > 1 && !f.Burst && !c.AllowFallback {
		errs = append(errs, cfgErr("burst", "%d: %s cannot send one skb several times (no skb sharing, as veth, lo and bonds): want burst 1, or allow the fallback to it", c.Burst, c.Device))
	}
	if c.CloneSkb > 0 && !f.CloneSkb && !c.AllowFallback {
		errs = append(errs, cfgErr("clone_skb", "%d: %s cannot send one skb several times (no skb sharing, as veth, lo and bonds): want clone_skb 0, or allow the fallback to it", c.CloneSkb, c.Device))
	}
	if c.XmitMode == XmitQueue && !f.QueueXmit {
		errs = append(errs, cfgErr("xmit_mode", "%s: this kernel's pktgen refuses it on %s: want %s", XmitQueue, c.Device, XmitStart))
	}
	if c.wantsNode() {
		if err := c.nodeRefusal(f.NodeFlag, d.NUMANode); err != nil {
			errs = append(errs, err)
		}
	}
	// The highest queue asked for, by the field that asked for it.
	top, field := -1, "queue_map"
	if c.HasQueueMap {
		top = c.QueueMapMax
	}
	if len(c.Queues) > 0 && slices.Max(c.Queues) > top {
		top, field = slices.Max(c.Queues), "queues"
	}
	if d.TxQueues > 0 && top >= d.TxQueues {
		errs = append(errs, cfgErr(field, "queue %d: %s has %d TX queues: want 0-%d", top, c.Device, d.TxQueues, d.TxQueues-1))
	}
	return errors.Join(errs...)
}

// wantsNode tells whether c allocates on a node: a node given, or the
// flag that does it set.
func (c *Config) wantsNode() bool {
	return c.HasNode || c.HasFlag("NODE") || c.HasFlag("NODE_ALLOC")
}

// OnNode makes c allocate its frames on node with the flag the kernel's
// probe found (NODE, or NODE_ALLOC on old kernels), replacing either
// flag c named.
func (c *Config) OnNode(node int, flag string) error {
	if err := c.nodeRefusal(flag, node); err != nil {
		return err
	}
	c.Flags = slices.DeleteFunc(c.Flags, func(f string) bool { return f == "NODE" || f == "NODE_ALLOC" })
	c.Flags = append(c.Flags, flag)
	c.HasNode, c.Node = true, node
	return nil
}

// nodeRefusal refuses allocating on a node where the kernel has no flag
// for it (flag "") or the device no node (node < 0); nil where it can.
func (c *Config) nodeRefusal(flag string, node int) error {
	switch {
	case flag == "":
		return cfgErr("node", "this kernel's pktgen has neither flag NODE nor NODE_ALLOC: want no node")
	case node < 0:
		return cfgErr("node", "%s has no NUMA node (a virtual device, or one node only): nothing to allocate on: want no node", c.Device)
	}
	return nil
}
