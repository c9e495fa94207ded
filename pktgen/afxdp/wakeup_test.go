package afxdp

import (
	"strings"
	"testing"

	"github.com/linerate/linerate/pktgen"
)

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
