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
	"github.com/linerate/linerate/latency"
	"github.com/linerate/linerate/pktgen"
	"github.com/linerate/linerate/pktgen/pktgentest"
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
// the switch sends them all on toward the receiver. The receivers that
// know their queues (xdp, afxdp) put the one stream on one queue of the
// lab's one-queue veth, every packet of it.
//
// The three runs of a family, each a lab of its own, go at once: a lab
// run spends most of its time stopping its agents (their gossip leaves),
// not sending, and every sender is paced (rate) so that three on two CPUs
// still deliver every frame. With IPv6 and the tag, a fourth run times
// round trips too (latency rtt: the afxdp sender's load, the latency
// stream the xdp method reflects with XDP_TX, tag and all).
func TestLabRunIPv6VLAN(t *testing.T) {
	nstest.SkipUnlessRoot(t)
	bin := Binary(t)
	id := os.Getpid() % 10000
	const (
		count = 20000
		rate  = "20000"
	)
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
	// Where the kernel refuses the xdp backend's live frames to root
	// (pktgentest.SkipUnlessLiveFrames), its runs are skipped, the rest run.
	noLive, whyNoLive := pktgentest.LiveFramesRefused()
	methods := []receiver.Method{receiver.MethodXDP, receiver.MethodAFXDP, receiver.MethodAFPacket}
	for k, fam := range families {
		family := []string{}
		if fam.ipv6 {
			family = append(family, "--ipv6")
		}
		if fam.vlan {
			family = append(family, "--vlan", "100")
		}
		var tagged uint64
		if fam.vlan {
			tagged = count
		}
		t.Run(fam.name, func(t *testing.T) {
			// The family's runs, started at once, checked one by one.
			pending := make([]*pendingLabRun, len(backends))
			for i, backend := range backends {
				method := methods[(i+k)%len(methods)]
				if backend == pktgen.BackendXDP && noLive {
					continue
				}
				pending[i] = startLabRun(t, bin, fmt.Sprintf("%s%d%d", fam.letter, id, i), append([]string{"--senders", "1", "--receivers", "1",
					"--backend", string(backend), "--method", string(method), "--count", fmt.Sprint(count), "--rate", rate}, family...)...)
			}
			var rtt *pendingLabRun
			if fam.ipv6 && fam.vlan {
				rtt = startLabRun(t, bin, fmt.Sprintf("%s%d%d", fam.letter, id, len(backends)), append([]string{"--senders", "1", "--receivers", "1",
					"--backend", string(pktgen.BackendAFXDP), "--method", string(receiver.MethodXDP), "--count", fmt.Sprint(count), "--rate", rate,
					"--latency", "rtt", "--rtt-rate", "1000"}, family...)...)
			}
			for i, backend := range backends {
				method := methods[(i+k)%len(methods)]
				t.Run(fmt.Sprintf("%s-%s", backend, method), func(t *testing.T) {
					if pending[i] == nil {
						t.Skipf("the xdp backend cannot send on this machine: the kernel refuses %v", whyNoLive)
					}
					res := pending[i].result(t)
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
					s1, r1 := switchPorts(t, res)
					if s1.TestPackets != count || s1.TaggedPackets != tagged {
						t.Errorf("switch port s1: %d test packets, %d tagged: want %d, %d tagged", s1.TestPackets, s1.TaggedPackets, count, tagged)
					}
					// Toward the receiver the port sends the test packets and
					// the few frames of the hosts' own (neighbour discovery).
					if r1.TxPackets < count || r1.TxPackets > count+16 {
						t.Errorf("switch port r1: sent %d frames toward its host, want the %d test packets and at most a few others", r1.TxPackets, count)
					}
				})
			}
			if rtt != nil {
				t.Run("rtt-afxdp-xdp", func(t *testing.T) { checkRTTTagged(t, rtt.result(t), count, fam.src, fam.dst) })
			}
		})
	}
}

// checkRTTTagged checks a `lab run --latency rtt --ipv6 --vlan` of
// count packets from the afxdp sender to the xdp method: the load
// balances exactly per stream from src to dst; every latency frame is
// received, reflected and returned, or lost where the switch dropped it;
// the round trips are on the sender's clock, none negative; the load and
// the latency stream crossed the switch tagged, and the switch counted
// every reflection coming back, tagged too.
func checkRTTTagged(t *testing.T, res *coordinator.Result, count uint64, src, dst netip.Addr) {
	t.Helper()
	exact(t, res, 1, count)
	checkEngines(t, res, string(pktgen.BackendAFXDP), string(receiver.MethodXDP))
	f := res.Flows[0]
	for _, s := range f.StreamDetail {
		if s.Src != src || s.Dst != dst || s.Received != count {
			t.Errorf("stream %s → %s: received %d, want %d from %s to %s", s.Src, s.Dst, s.Received, count, src, dst)
		}
	}
	r := f.RTT
	if res.Latency != coordinator.LatencyRTT || r == nil || r.Latency == nil {
		t.Fatalf("latency mode %q, round trips %+v", res.Latency, r)
	}
	// The latency stream runs as long as the load: a second at the
	// rate's 20,000 pps, so about 1,000 frames at 1,000 pps.
	drops := res.Lab.Drops()
	if r.Sent < 500 || r.LostOut+r.LostBack != drops || r.Received != r.Sent-r.LostOut || r.Reflected != r.Received || r.Returned != r.Reflected-r.LostBack {
		t.Errorf("latency stream sent %d, received %d, reflected %d, returned %d (lost %d out, %d back); the switch dropped %d: want every frame accounted for",
			r.Sent, r.Received, r.Reflected, r.Returned, r.LostOut, r.LostBack, drops)
	}
	if l := r.Latency; l.Samples() != r.Returned || l.Clock != latency.SameHost || l.Negative != 0 || l.Absurd != 0 || l.MinUs == 0 {
		t.Errorf("round trips %+v: want one sample per return (%d), same-host, none negative", l, r.Returned)
	}
	s1, r1 := switchPorts(t, res)
	if s1.TestPackets != f.Sent+r.Sent || s1.TaggedPackets != s1.TestPackets {
		t.Errorf("switch port s1: %d test frames, %d tagged: want the load's %d and the latency stream's %d, all tagged", s1.TestPackets, s1.TaggedPackets, f.Sent, r.Sent)
	}
	// Every reflection goes back tagged. The tag reaches the receiver's
	// veth in the packet's metadata, not in its bytes (the bridge takes
	// it out, as a NIC's VLAN offload does), so the reflecting program
	// sees the frame untagged and puts the run's tag back on it
	// (receiver.Options.ReflectVLAN): without that, XDP_TX would send
	// it back on no VLAN.
	if r1.TestPackets != r.Reflected || r1.TaggedPackets != r.Reflected {
		t.Errorf("switch port r1: %d test frames, %d tagged: want the %d reflections, all tagged", r1.TestPackets, r1.TaggedPackets, r.Reflected)
	}
	m := r.Latency.Summary()
	t.Logf("FIGURE rtt ipv6 vlan afxdp→xdp: %d round trips, min %.0f p50 %.0f p99 %.0f µs", r.Returned, m.MinUs, m.P50Us, m.P99Us)
}

// switchPorts are a one-pair lab's switch ports: the sender's (s1) and
// the receiver's (r1).
func switchPorts(t *testing.T, res *coordinator.Result) (s1, r1 coordinator.PortTruth) {
	t.Helper()
	if res.Lab == nil || len(res.Lab.SwitchPorts) != 2 || res.Lab.SwitchPorts[0].Name != "s1" || res.Lab.SwitchPorts[1].Name != "r1" {
		t.Fatalf("lab truth %+v: want the switch ports s1 and r1", res.Lab)
	}
	return res.Lab.SwitchPorts[0], res.Lab.SwitchPorts[1]
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
