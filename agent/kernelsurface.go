package agent

import (
	"context"

	"github.com/linerate/linerate/pktgen"
)

// The kernel backend's surface beyond one frame per packet (burst,
// clone_skb, a node for allocations, a queue map) is what a device or a
// kernel may refuse: the agent asks the kernel backend's own probe
// (pktgen.Kernel.Probe: it tries each on the device and resets pktgen)
// before it accepts a send that uses any of them, and refuses by name
// what the probe or the NIC's topology says cannot be done, instead of
// failing at the start of the run.

// featureProber is the kernel backend's probe (pktgen.Kernel).
type featureProber interface {
	Probe(ctx context.Context, dev string, cpu int) (*pktgen.Features, error)
}

// needsProbe tells whether cfg uses what only the probe can clear.
func needsProbe(cfg *pktgen.Config) bool {
	return cfg.Burst > 1 || cfg.CloneSkb > 0 || cfg.XmitMode == pktgen.XmitQueue || cfg.HasNode || cfg.HasFlag("NODE") || cfg.HasFlag("NODE_ALLOC")
}

// deviceFacts are what the agent read of its NIC at start: TX queues
// and NUMA node (unknown: 0 and -1, a virtual device).
func (c *configurer) deviceFacts() pktgen.DeviceFacts {
	f := c.inv.facts()
	d := pktgen.DeviceFacts{NUMANode: f.numa}
	if f.nic != nil {
		d.TxQueues = f.nic.TxQueues
	}
	return d
}

// resolveNode puts the NIC's own NUMA node in a config that asks for
// allocations on it (pktgen.NodeOfDevice: the coordinator's node_alloc),
// refusing a host whose NIC has none.
func resolveNode(cfg *pktgen.Config, d pktgen.DeviceFacts) error {
	if !cfg.HasNode || cfg.Node != pktgen.NodeOfDevice {
		return nil
	}
	if d.NUMANode < 0 {
		return failf(ErrHost, "config.node_alloc: %s has no NUMA node (a virtual device, or a host of one node): nothing to allocate on; run without node_alloc", cfg.Device)
	}
	cfg.Node = d.NUMANode
	return nil
}

// checkKernel refuses what the kernel backend cannot send of cfg on its
// device, as the backend's probe finds it on the first thread's CPU, and
// sets the node flag the probe found (NODE, or NODE_ALLOC on old
// kernels) where cfg allocates on a node. Nothing to probe: no probe.
func checkKernel(ctx context.Context, cfg *pktgen.Config, be pktgen.Backend, d pktgen.DeviceFacts) error {
	if !needsProbe(cfg) && !cfg.HasQueueMap {
		return nil
	}
	f := &pktgen.Features{}
	if needsProbe(cfg) {
		p, ok := be.(featureProber)
		if !ok {
			return nil // a generator of the agent's own: nothing to probe
		}
		var err error
		if f, err = p.Probe(ctx, cfg.Device, cfg.CPUs[0]); err != nil {
			return failf(ErrHost, "probe pktgen on %s: %v", cfg.Device, err)
		}
	}
	if err := cfg.KernelCheck(f, d); err != nil {
		return fail(ErrInvalid, err)
	}
	if cfg.HasNode {
		if err := cfg.OnNode(cfg.Node, f.NodeFlag); err != nil {
			return fail(ErrHost, err)
		}
	}
	return nil
}
