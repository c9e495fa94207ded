//go:build linux && traffic

package e2e

import (
	"fmt"
	"math"
	"net/netip"
	"os"
	"testing"

	"github.com/linerate/linerate/coordinator"
	"github.com/linerate/linerate/internal/netns/nstest"
)

// TestLabRunIPv6VLAN drives `lab run --ipv6` and `lab run --vlan 100`
// with both userspace senders and both receive methods (each sender
// with the other's method, so that two runs a feature cover all four),
// exact per stream and balanced with the switch's counts. IPv6 runs go
// between the hosts' 2001:2::/48 addresses at the family's smallest
// frame (82 B, the default); a VLAN run's every test packet comes into
// the switch tagged, as its sender's port program counts.
func TestLabRunIPv6VLAN(t *testing.T) {
	nstest.SkipUnlessRoot(t)
	bin := Binary(t)
	id := os.Getpid() % 10000
	const count = 20000
	pairs := [][2]string{{"xdp", "afpacket"}, {"afpacket", "xdp"}}
	for i, p := range pairs {
		t.Run("ipv6-"+p[0]+"-"+p[1], func(t *testing.T) {
			res := labRun(t, bin, fmt.Sprintf("i%d%d", id, i), "--senders", "1", "--receivers", "1", "--ipv6",
				"--backend", p[0], "--method", p[1], "--count", fmt.Sprint(count))
			exact(t, res, 1, count)
			checkEngines(t, res, p[0], p[1])
			src, dst := netip.MustParseAddr("2001:2::1"), netip.MustParseAddr("2001:2::65")
			f := res.Flows[0]
			if len(f.StreamDetail) == 0 {
				t.Fatalf("no stream detail: %+v", f)
			}
			for _, s := range f.StreamDetail {
				if s.Src != src || s.Dst != dst || s.Received != count {
					t.Errorf("stream %s → %s: received %d, want %d from %s to %s", s.Src, s.Dst, s.Received, count, src, dst)
				}
			}
			// The frames are the IPv6 minimum, 82 B with FCS: the default.
			if b := f.L2BPS / f.PPS / 8; math.Abs(b-82) > 0.01 {
				t.Errorf("frames of %.2f B with FCS (l2_bps %.0f over %.0f pps), want the IPv6 minimum 82", b, f.L2BPS, f.PPS)
			}
		})
	}
	for i, p := range pairs {
		t.Run("vlan-"+p[0]+"-"+p[1], func(t *testing.T) {
			res := labRun(t, bin, fmt.Sprintf("q%d%d", id, i), "--senders", "1", "--receivers", "1", "--vlan", "100",
				"--backend", p[0], "--method", p[1], "--count", fmt.Sprint(count))
			exact(t, res, 1, count)
			checkEngines(t, res, p[0], p[1])
			if res.Lab == nil || len(res.Lab.SwitchPorts) != 2 {
				t.Fatalf("lab truth %+v", res.Lab)
			}
			if sp := res.Lab.SwitchPorts[0]; sp.Name != "s1" || sp.TestPackets != count || sp.TaggedPackets != count {
				t.Errorf("switch port %s: %d test packets, %d tagged: want all %d tagged", sp.Name, sp.TestPackets, sp.TaggedPackets, count)
			}
		})
	}
}

// checkEngines fails t unless the run's sender used backend and its
// receiver method.
func checkEngines(t *testing.T, res *coordinator.Result, backend, method string) {
	t.Helper()
	for _, h := range res.Hosts {
		if (h.Role == "sender" && h.Backend != backend) || (h.Role == "receiver" && h.Method != method) {
			t.Errorf("host %s (%s): backend %q method %q, want %s and %s", h.Name, h.Role, h.Backend, h.Method, backend, method)
		}
	}
}
