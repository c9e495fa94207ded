package afxdp

import (
	"strings"
	"testing"

	"github.com/linerate/linerate/pktgen"
)

// TestVirtual: the drivers of virtual devices and devices without a bus
// address are virtual, with the reason; NICs on a bus are physical.
func TestVirtual(t *testing.T) {
	// driver and bus address -> virtual, and what the reason says
	want := map[[2]string]struct {
		virtual bool
		why     string
	}{
		{"veth", ""}:                   {true, "driver veth is a virtual device"},
		{"virtio_net", "0000:00:03.0"}: {true, "driver virtio_net is a virtual device"},
		{"tun", "tap"}:                 {true, "driver tun is a virtual device"},
		{"mystery", ""}:                {true, "no bus address"},
		{"ice", "0000:3b:00.0"}:        {false, "driver ice at 0000:3b:00.0 is a physical NIC"},
		{"mlx5_core", "0000:5e:00.1"}:  {false, "physical NIC"},
	}
	for dev, w := range want {
		v, why := Virtual(dev[0], dev[1])
		if v != w.virtual || !strings.Contains(why, w.why) {
			t.Errorf("Virtual(%q, %q) = %v, %q; want %v saying %q", dev[0], dev[1], v, why, w.virtual, w.why)
		}
	}
}

func TestWakeup(t *testing.T) {
	for _, tc := range []struct {
		policy  pktgen.NeedWakeup
		virtual bool
		on      bool
		why     string
	}{
		{"", true, false, "need_wakeup off (auto): veth"},
		{pktgen.NeedWakeupAuto, true, false, "off (auto)"},
		{pktgen.NeedWakeupAuto, false, true, "need_wakeup on (auto): veth"},
		{pktgen.NeedWakeupOn, true, true, "on: asked for"},
		{pktgen.NeedWakeupOff, false, false, "off: asked for"},
	} {
		on, why := Wakeup(tc.policy, tc.virtual, "veth")
		if on != tc.on || !strings.Contains(why, tc.why) {
			t.Errorf("Wakeup(%q, virtual %v) = %v, %q; want %v saying %q", tc.policy, tc.virtual, on, why, tc.on, tc.why)
		}
	}
}
