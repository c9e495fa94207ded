package agent

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/linerate/linerate/pktgen"
)

// probingBackend is a kernel backend whose probe answers feats and
// counts its calls.
type probingBackend struct {
	countingBackend
	feats  pktgen.Features
	probed int
	err    error
}

func (b *probingBackend) Name() pktgen.BackendName { return pktgen.BackendKernel }

func (b *probingBackend) Probe(_ context.Context, dev string, cpu int) (*pktgen.Features, error) {
	b.probed++
	f := b.feats
	return &f, b.err
}

func TestCheckKernel(t *testing.T) {
	bg := context.Background()
	nic := pktgen.DeviceFacts{TxQueues: 4, NUMANode: 1}
	veth := pktgen.Features{QueueXmit: true, NodeFlag: "NODE"}
	base := func() pktgen.Config { return pktgen.Config{Device: "eth1", CPUs: []int{2}, Count: 10} }

	// Nothing beyond one frame per packet: no probe.
	be := &probingBackend{feats: veth}
	cfg := base()
	if err := checkKernel(bg, &cfg, be, nic); err != nil || be.probed != 0 {
		t.Errorf("plain send: %v, %d probes: want accepted without one", err, be.probed)
	}
	// A burst the device cannot send: refused by name, as the caller's.
	cfg.Burst = 4
	err := checkKernel(bg, &cfg, be, nic)
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "burst: 4: eth1 cannot send one skb several times") || be.probed != 1 {
		t.Errorf("burst on a device without skb sharing: %v (%d probes)", err, be.probed)
	}
	// The node: the flag this kernel has, on the device's node.
	be = &probingBackend{feats: pktgen.Features{Burst: true, CloneSkb: true, NodeFlag: "NODE_ALLOC"}}
	cfg = base()
	cfg.HasNode, cfg.Node = true, pktgen.NodeOfDevice
	if err := resolveNode(&cfg, nic); err != nil || cfg.Node != 1 {
		t.Fatalf("resolve the device's node: %v, node %d", err, cfg.Node)
	}
	if err := checkKernel(bg, &cfg, be, nic); err != nil || !slices.Contains(cfg.Flags, "NODE_ALLOC") || cfg.Node != 1 {
		t.Errorf("node_alloc on an old kernel: %v, flags %v node %d: want NODE_ALLOC on node 1", err, cfg.Flags, cfg.Node)
	}
	// A host whose NIC has no node: the host's refusal, before anything.
	cfg = base()
	cfg.HasNode, cfg.Node = true, pktgen.NodeOfDevice
	if err := resolveNode(&cfg, pktgen.DeviceFacts{NUMANode: -1}); !errors.Is(err, ErrHost) || !strings.Contains(err.Error(), "config.node_alloc: eth1 has no NUMA node") {
		t.Errorf("node_alloc without a node: %v", err)
	}
	// A queue map beyond the device's TX queues: refused without a probe.
	be = &probingBackend{}
	cfg = base()
	cfg.HasQueueMap, cfg.QueueMapMax = true, 4
	if err := checkKernel(bg, &cfg, be, nic); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "eth1 has 4 TX queues: want 0-3") || be.probed != 0 {
		t.Errorf("queue map 0-4 on 4 TX queues: %v (%d probes)", err, be.probed)
	}
	// A queue map with queue_xmit: probed for queue_xmit, and accepted
	// where the kernel has it (an unprobed queue_xmit was refused as the
	// kernel's).
	be = &probingBackend{feats: veth}
	cfg = base()
	cfg.HasQueueMap, cfg.QueueMapMax, cfg.XmitMode = true, 3, pktgen.XmitQueue
	if err := checkKernel(bg, &cfg, be, nic); err != nil || be.probed != 1 {
		t.Errorf("queue map 0-3 with queue_xmit: %v (%d probes): want accepted after a probe", err, be.probed)
	}
	// Per-thread queues beyond the device's: refused by their own name.
	be = &probingBackend{feats: veth}
	cfg = base()
	cfg.Queues, cfg.XmitMode = []int{5}, pktgen.XmitQueue
	if err := checkKernel(bg, &cfg, be, nic); err == nil || !strings.Contains(err.Error(), "queues: queue 5: eth1 has 4 TX queues") {
		t.Errorf("queues [5] on 4 TX queues: %v: want refused by queues", err)
	}
	// A probe that fails is the host's.
	be = &probingBackend{err: errors.New("no pktgen")}
	cfg = base()
	cfg.CloneSkb = 2
	if err := checkKernel(bg, &cfg, be, nic); !errors.Is(err, ErrHost) || !strings.Contains(err.Error(), "probe pktgen on eth1") {
		t.Errorf("a failed probe: %v", err)
	}
}
