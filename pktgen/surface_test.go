package pktgen

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestCopies(t *testing.T) {
	for _, tc := range []struct{ burst, clone, want int }{
		{0, 0, 1}, {1, 0, 1}, {1, 1, 1}, {4, 0, 4}, {0, 2, 2}, {4, 2, 8}, {32, 64, 2048},
	} {
		c := Config{Burst: tc.burst, CloneSkb: tc.clone}
		if got := c.Copies(); got != tc.want {
			t.Errorf("burst %d clone_skb %d: %d copies, want %d", tc.burst, tc.clone, got, tc.want)
		}
	}
}

func TestKernelCheck(t *testing.T) {
	sharing := &Features{Burst: true, CloneSkb: true, QueueXmit: true, NodeFlag: "NODE"}
	veth := &Features{QueueXmit: true, NodeFlag: "NODE"}
	nic := DeviceFacts{TxQueues: 4, NUMANode: 1}
	virtual := DeviceFacts{NUMANode: -1}
	for _, tc := range []struct {
		name string
		set  func(*Config)
		f    *Features
		d    DeviceFacts
		want string // "" = accepted
	}{
		{"plain", func(*Config) {}, veth, virtual, ""},
		{"burst on a sharing device", func(c *Config) { c.Burst = 8 }, sharing, nic, ""},
		{"burst without skb sharing", func(c *Config) { c.Burst = 8 }, veth, virtual, "burst: 8: eth0 cannot send one skb several times"},
		{"clone_skb without skb sharing", func(c *Config) { c.CloneSkb = 2 }, veth, virtual, "clone_skb: 2: eth0 cannot send one skb several times"},
		{"the fallback allowed", func(c *Config) { c.Burst, c.CloneSkb, c.AllowFallback = 8, 2, true }, veth, virtual, ""},
		{"queue_xmit refused", func(c *Config) { c.XmitMode = XmitQueue }, &Features{}, nic, "xmit_mode: queue_xmit"},
		{"node on a kernel without the flag", func(c *Config) { c.HasNode, c.Node = true, 1 }, &Features{Burst: true}, nic, "neither flag NODE nor NODE_ALLOC"},
		{"node on a device without one", func(c *Config) { c.Flags = append(c.Flags, "NODE") }, sharing, virtual, "eth0 has no NUMA node"},
		{"the device's node", func(c *Config) { c.HasNode, c.Node = true, 1 }, sharing, nic, ""},
		{"queue map in range", func(c *Config) { c.Flags, c.HasQueueMap, c.QueueMapMin, c.QueueMapMax = nil, true, 0, 3 }, veth, nic, ""},
		{"queue map beyond the TX queues", func(c *Config) { c.Flags, c.HasQueueMap, c.QueueMapMin, c.QueueMapMax = nil, true, 2, 7 }, veth, nic, "queue_map: queue 7: eth0 has 4 TX queues: want 0-3"},
		{"per-thread queue beyond them", func(c *Config) { c.Flags, c.Queues = nil, []int{0, 4} }, veth, nic, "queue 4: eth0 has 4 TX queues"},
		{"TX queues unknown", func(c *Config) { c.Flags, c.HasQueueMap, c.QueueMapMax = nil, true, 9 }, veth, virtual, ""},
	} {
		c := baseConfig()
		tc.set(&c)
		err := c.KernelCheck(tc.f, tc.d)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, ErrConfig)):
			t.Errorf("%s: %v, want an ErrConfig saying %q", tc.name, err, tc.want)
		}
	}
}

func TestOnNode(t *testing.T) {
	c := baseConfig()
	c.Flags = append(c.Flags, "NODE")
	if err := c.OnNode(1, "NODE_ALLOC"); err != nil || !c.HasNode || c.Node != 1 || !slices.Equal(c.Flags, []string{"NO_TIMESTAMP", "QUEUE_MAP_CPU", "NODE_ALLOC"}) {
		t.Errorf("OnNode(1, NODE_ALLOC): %v: node %v %d, flags %v", err, c.HasNode, c.Node, c.Flags)
	}
	if cmds := strings.Join(c.Commands(0), "\n"); !strings.Contains(cmds, "node 1") || !strings.Contains(cmds, "flag NODE_ALLOC") {
		t.Errorf("commands without the node:\n%s", cmds)
	}
	for _, tc := range []struct {
		node int
		flag string
		want string
	}{{1, "", "neither flag"}, {-1, "NODE", "no NUMA node"}} {
		c := baseConfig()
		if err := c.OnNode(tc.node, tc.flag); err == nil || !strings.Contains(err.Error(), tc.want) || c.HasNode {
			t.Errorf("OnNode(%d, %q): %v, node set %v: want refused saying %q", tc.node, tc.flag, err, c.HasNode, tc.want)
		}
	}
}
