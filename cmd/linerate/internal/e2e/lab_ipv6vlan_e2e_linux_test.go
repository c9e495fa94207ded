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
	"github.com/linerate/linerate/pktgen"
	"github.com/linerate/linerate/receiver"
)

// TestLabRunIPv6VLAN drives `lab run --ipv6`, `lab run --vlan 100` and
// both together through every userspace sender and every receive
// method: a Latin square of nine runs, in which each sender sends once in
// each of the three and each method receives once in each, and every
// sender meets every method once. Each run balances exactly per stream
// between the lab's addresses of its family (198.18.0.1 → 198.18.0.101,
// 2001:2::1 → 2001:2::65) at the family's smallest frame, the default
// (64 B with FCS for IPv4, 66 B tagged, 82 B for IPv6, 86 B tagged, as
// RFC 2544 and RFC 5180 count them); a tagged run's every test packet
// comes into the switch tagged, as its sender's port program counts, and
// the switch sends it all on toward the receiver. The receivers that know
// their queues (xdp, afxdp) put the one stream on one queue of the lab's
// one-queue veth, every packet of it.
func TestLabRunIPv6VLAN(t *testing.T) {
	nstest.SkipUnlessRoot(t)
	bin := Binary(t)
	id := os.Getpid() % 10000
	const count = 20000
	families := []struct {
		name     string
		letter   string // the lab's name: this letter, the process, the run
		ipv6     bool
		vlan     bool
		frame    float64 // with FCS and tag
		src, dst netip.Addr
	}{
		{"ipv6", "i", true, false, 82, netip.MustParseAddr("2001:2::1"), netip.MustParseAddr("2001:2::65")},
		{"vlan", "q", false, true, 66, netip.MustParseAddr("198.18.0.1"), netip.MustParseAddr("198.18.0.101")},
		{"ipv6-vlan", "b", true, true, 86, netip.MustParseAddr("2001:2::1"), netip.MustParseAddr("2001:2::65")},
	}
	backends := []pktgen.BackendName{pktgen.BackendXDP, pktgen.BackendAFXDP, pktgen.BackendAFPacket}
	methods := []receiver.Method{receiver.MethodXDP, receiver.MethodAFXDP, receiver.MethodAFPacket}
	for k, fam := range families {
		for i, backend := range backends {
			method := methods[(i+k)%len(methods)]
			t.Run(fmt.Sprintf("%s-%s-%s", fam.name, backend, method), func(t *testing.T) {
				args := []string{"--senders", "1", "--receivers", "1", "--backend", string(backend), "--method", string(method), "--count", fmt.Sprint(count)}
				if fam.ipv6 {
					args = append(args, "--ipv6")
				}
				if fam.vlan {
					args = append(args, "--vlan", "100")
				}
				res := labRun(t, bin, fmt.Sprintf("%s%d%d", fam.letter, id, i), args...)
				exact(t, res, 1, count)
				checkEngines(t, res, string(backend), string(method))
				f := res.Flows[0]
				if len(f.StreamDetail) == 0 {
					t.Fatalf("no stream detail: %+v", f)
				}
				for _, s := range f.StreamDetail {
					if s.Src != fam.src || s.Dst != fam.dst || s.Sent != count || s.Received != count {
						t.Errorf("stream %s → %s: sent %d, received %d: want %d from %s to %s", s.Src, s.Dst, s.Sent, s.Received, count, fam.src, fam.dst)
					}
					checkQueues(t, method, s)
				}
				if b := f.L2BPS / f.PPS / 8; math.Abs(b-fam.frame) > 0.01 {
					t.Errorf("frames of %.2f B with FCS (l2_bps %.0f over %.0f pps), want the family's smallest, %.0f", b, f.L2BPS, f.PPS, fam.frame)
				}
				if res.Lab == nil || len(res.Lab.SwitchPorts) != 2 {
					t.Fatalf("lab truth %+v", res.Lab)
				}
				var tagged uint64
				if fam.vlan {
					tagged = count
				}
				s1, r1 := res.Lab.SwitchPorts[0], res.Lab.SwitchPorts[1]
				if s1.Name != "s1" || s1.TestPackets != count || s1.TaggedPackets != tagged {
					t.Errorf("switch port %s: %d test packets, %d tagged: want %d, %d tagged", s1.Name, s1.TestPackets, s1.TaggedPackets, count, tagged)
				}
				// Toward the receiver the port sends the test packets and
				// the few frames of the hosts' own (neighbour discovery).
				if r1.Name != "r1" || r1.TxPackets < count || r1.TxPackets > count+16 {
					t.Errorf("switch port %s: sent %d frames toward its host, want the %d test packets and at most a few others", r1.Name, r1.TxPackets, count)
				}
			})
		}
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

// checkQueues fails t unless stream s's RSS spread is what method
// reports of a lab's one-queue veth: with xdp and afxdp, which know the
// queue a frame came in on, one queue with every packet the stream
// received; with afpacket, which does not, none.
func checkQueues(t *testing.T, method receiver.Method, s coordinator.Stream) {
	t.Helper()
	var on uint64
	for _, q := range s.Queues {
		on += q.Packets
	}
	if method.KnowsQueues() && (len(s.Queues) != 1 || on != s.Received) || !method.KnowsQueues() && s.Queues != nil {
		t.Errorf("stream %s→%s:%d (method %s): received %d, queues %+v: want one queue with all of them (xdp, afxdp) or none (afpacket)",
			s.Src, s.Dst, s.DstPort, method, s.Received, s.Queues)
	}
}
