package pktgen

import (
	"strings"
	"testing"
)

// The one need_wakeup choice of the AF_XDP sender and receiver: asked
// for is taken; auto is off on a virtual device, on on a physical NIC.
func TestNeedWakeupChoose(t *testing.T) {
	for _, tc := range []struct {
		policy  NeedWakeup
		virtual bool
		on      bool
		why     string
	}{
		{"", true, false, "need_wakeup off (auto): veth"},
		{NeedWakeupAuto, true, false, "off (auto)"},
		{NeedWakeupAuto, false, true, "need_wakeup on (auto): veth"},
		{NeedWakeupOn, true, true, "on: asked for"},
		{NeedWakeupOff, false, false, "off: asked for"},
	} {
		on, why := tc.policy.Choose(tc.virtual, "veth")
		if on != tc.on || !strings.Contains(why, tc.why) {
			t.Errorf("%q.Choose(virtual %v) = %v, %q; want %v saying %q", tc.policy, tc.virtual, on, why, tc.on, tc.why)
		}
	}
}
