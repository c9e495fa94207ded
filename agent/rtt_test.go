package agent

import (
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/linerate/linerate/pktgen"
)

// A send's latency stream: one thread per distinct destination of the
// load, on the load's CPUs in turn, from and to the plan's port at its
// rate, the load's frame size and duration (a run by count: the longest,
// stopped with the load); refused past its rate's bounds, with port 0,
// and with more destinations than the load has CPUs.
func TestRTTConfig(t *testing.T) {
	mac := func(b byte) net.HardwareAddr { return net.HardwareAddr{2, 0, 0, 0, 0, b} }
	a, b := netip.MustParseAddr("198.18.0.2"), netip.MustParseAddr("198.18.0.3")
	load := pktgen.Config{Device: "eth1", CPUs: []int{2, 3, 4}, Count: 1000, PktSize: 124,
		SrcMin: netip.MustParseAddr("198.18.0.1"), SrcMAC: mac(1), SrcPerThread: true,
		ThreadDst: []pktgen.Dest{{Addr: a, MAC: mac(2)}, {Addr: b, MAC: mac(3)}, {Addr: a, MAC: mac(2)}}}
	c, err := rttConfig(load, rttPlan{port: 10004, ratePPS: 500})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.CPUs) != 2 || c.CPUs[0] != 2 || c.CPUs[1] != 3 || len(c.ThreadDst) != 2 || c.ThreadDst[0].Addr != a || c.ThreadDst[1].Addr != b ||
		c.UDPSrcMin != 10004 || c.UDPDstMax != 10004 || c.RatePPS != 500 || c.PktSize != 124 || c.Duration != rttLongest ||
		c.SrcMin != load.SrcMin || c.SrcPerThread || c.Count != 0 {
		t.Errorf("latency stream %+v", c)
	}
	load.Duration, load.Count, load.ThreadDst, load.DstMin, load.DstMAC, load.PktSize = 3*time.Second, 0, nil, a, mac(2), 0
	if c, err = rttConfig(load, rttPlan{port: 10004, ratePPS: 1}); err != nil || len(c.CPUs) != 1 || c.DstMin != a || c.Duration != 3*time.Second || c.PktSize != 60 {
		t.Errorf("one destination: %+v, %v", c, err)
	}
	if c.XmitMode != "" {
		t.Errorf("a load past the qdisc: the latency stream's xmit mode %q, want the default", c.XmitMode)
	}
	// A load through the sender's qdisc (the VM lab's netem): the latency
	// stream goes through it too, or its round trips would miss the delay.
	load.XmitMode = pktgen.XmitQueue
	if c, err = rttConfig(load, rttPlan{port: 10004, ratePPS: 1}); err != nil || c.XmitMode != pktgen.XmitQueue || c.UserspaceCheck(pktgen.BackendAFPacket) != nil {
		t.Errorf("a load in queue_xmit: the latency stream's %q, %v", c.XmitMode, err)
	}
	load.XmitMode = ""
	for _, tt := range []struct {
		load pktgen.Config
		plan rttPlan
		want string
	}{
		{load, rttPlan{port: 10004, ratePPS: 0}, "rtt.rate_pps 0: want 1 to 10000 packets a second"},
		{load, rttPlan{port: 10004, ratePPS: 10001}, "rtt.rate_pps 10001: want 1 to 10000 packets a second"},
		{load, rttPlan{port: 0, ratePPS: 10}, "rtt.port: 0: want a UDP port, 1 to 65535"},
		{pktgen.Config{Device: "eth1", CPUs: []int{2}, Duration: time.Second, ThreadDst: []pktgen.Dest{{Addr: a, MAC: mac(2)}, {Addr: b, MAC: mac(3)}}},
			rttPlan{port: 10004, ratePPS: 10}, "rtt: 2 destinations and 1 CPUs: a latency stream to each takes a CPU of the load's"},
	} {
		if _, err := rttConfig(tt.load, tt.plan); err == nil || err.Error() != tt.want {
			t.Errorf("%+v: %v, want %q", tt.plan, err, tt.want)
		}
	}
}
