package pktgen

import (
	"errors"
	"net/netip"
	"strings"
	"testing"
)

func TestUserspaceCheck(t *testing.T) {
	base := Config{Device: "eth0", CPUs: []int{0, 1}, Count: 10, PktSize: 60, DstMin: netip.MustParseAddr("198.18.0.2"),
		SrcMin: netip.MustParseAddr("198.18.0.1"), SrcPerThread: true, Queues: []int{0, 1}, Flags: []string{"UDPCSUM", "NO_TIMESTAMP"},
		UDPSrcMin: 9, UDPSrcMax: 99, HasVLAN: true, VLANID: 5, Burst: 1}
	if err := base.UserspaceCheck("xdp"); err != nil {
		t.Fatalf("a config the userspace backends send: %v", err)
	}
	// afpacket goes through the qdisc when asked (queue_xmit); xdp cannot.
	queued := base
	queued.XmitMode = XmitQueue
	if err := queued.UserspaceCheck(BackendAFPacket); err != nil {
		t.Errorf("afpacket with queue_xmit: %v", err)
	}
	if err := queued.UserspaceCheck(BackendXDP); !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "xmit_mode") {
		t.Errorf("xdp with queue_xmit: %v, want refused naming xmit_mode", err)
	}
	for _, tc := range []struct {
		field string
		edit  func(*Config)
	}{
		{"imix", func(c *Config) { c.PktSize, c.IMIX = 0, IMIX{{Size: 64, Weight: 1}} }},
		{"min_pkt_size", func(c *Config) { c.PktSize, c.MinPktSize, c.MaxPktSize = 0, 60, 80 }},
		{"frags", func(c *Config) { c.Frags = 2 }},
		{"clone_skb", func(c *Config) { c.CloneSkb = 1 }},
		{"burst", func(c *Config) { c.Burst = 4 }},
		{"xmit_mode", func(c *Config) { c.XmitMode = XmitNetifReceive }},
		{"flows", func(c *Config) { c.Flows = 8 }},
		{"queue_map", func(c *Config) { c.Queues, c.HasQueueMap, c.QueueMapMax = nil, true, 3 }},
		{"cpus", func(c *Config) { c.CPUs = []int{1, 1} }}, // two devices on one thread, queues 0 and 1
		{"node", func(c *Config) { c.HasNode = true }},
		{"dst_max", func(c *Config) { c.DstMax = netip.MustParseAddr("198.18.0.9") }},
		{"src_max", func(c *Config) { c.SrcPerThread, c.SrcMax = false, netip.MustParseAddr("198.18.0.9") }},
		{"udp_dst_max", func(c *Config) { c.UDPDstMin, c.UDPDstMax = 9, 20 }},
		{"flag", func(c *Config) { c.Flags = []string{"QUEUE_MAP_CPU"} }},
	} {
		c := base
		tc.edit(&c)
		err := c.UserspaceCheck("afpacket")
		if !errors.Is(err, ErrUnsupported) || !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "afpacket backend: "+tc.field+":") {
			t.Errorf("%s: %v", tc.field, err)
		}
	}
}

func TestPeriod(t *testing.T) {
	for _, tc := range []struct {
		c        Config
		num, den uint64
	}{
		{Config{RatePPS: 20000}, 1e9, 20000},
		{Config{DelayNS: 5000}, 5000, 1},
		{Config{DelayNS: 5000, Burst: 4}, 5000, 4},
		{Config{RateMbps: 100, PktSize: 60}, 60 * 8 * 1000, 100},
		{Config{}, 0, 1},
	} {
		if num, den := tc.c.Period(0); num != tc.num || den != tc.den {
			t.Errorf("%+v: period %d/%d, want %d/%d", tc.c, num, den, tc.num, tc.den)
		}
	}
	c := Config{Device: "lra", CPUs: []int{3}, Flags: []string{"UDPCSUM", "!UDPCSUM", "NO_TIMESTAMP"}}
	if c.ThreadEntry(0) != "lra@cpu3" || c.HasFlag("UDPCSUM") || !c.HasFlag("NO_TIMESTAMP") {
		t.Errorf("entry %q, UDPCSUM %v, NO_TIMESTAMP %v", c.ThreadEntry(0), c.HasFlag("UDPCSUM"), c.HasFlag("NO_TIMESTAMP"))
	}
}
