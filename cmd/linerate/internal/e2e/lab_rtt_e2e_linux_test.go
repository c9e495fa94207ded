//go:build linux && traffic

package e2e

import (
	"fmt"
	"os"
	"testing"

	"github.com/linerate/linerate/coordinator"
	"github.com/linerate/linerate/internal/netns/nstest"
	"github.com/linerate/linerate/latency"
)

// TestLabRunRTT is `lab run --latency rtt` on a lab of namespaces: each
// sender sends a latency stream to its receiver beside the load, the
// receiver reflects it (XDP_TX through the switch), the sender times its
// return on its own clock. Known truth: the switch's own counts. With
// nothing dropped, every latency frame sent is received, reflected and
// returned, the receivers' switch ports counted exactly the reflections,
// and the round trips are on one clock (same-host), never negative, one
// sample per return, with a lowest round trip for each second. With the
// switch dropping every 100th test frame of a sender's port, the load's
// losses and the latency stream's together are the switch's drops, to
// the frame, and the latency stream loses only on its way out.
func TestLabRunRTT(t *testing.T) {
	nstest.SkipUnlessRoot(t)
	bin := Binary(t)
	// Each run's lab has a name of its own: a letter and this process.
	lab := func(letter string) string { return fmt.Sprintf("%s%d", letter, os.Getpid()%10000) }

	t.Run("pairwise-2x2", func(t *testing.T) {
		res := labRun(t, bin, lab("t"), "--senders", "2", "--receivers", "2", "--duration", "3s", "--rate", "20000",
			"--latency", "rtt", "--rtt-rate", "1000")
		if res.Latency != coordinator.LatencyRTT || len(res.Flows) != 2 {
			t.Fatalf("latency mode %q, %d flows", res.Latency, len(res.Flows))
		}
		drops := res.Lab.Drops()
		var lost uint64
		reflected := map[string]uint64{}
		for _, f := range res.Flows {
			r := f.RTT
			if r == nil {
				t.Fatalf("flow %s→%s: no round trips", f.Sender, f.Receiver)
			}
			if f.Received+f.Lost != f.Sent {
				t.Errorf("flow %s→%s: the load's books: sent %d, received %d, lost %d", f.Sender, f.Receiver, f.Sent, f.Received, f.Lost)
			}
			lost += f.Lost + r.LostOut + r.LostBack
			reflected[f.Receiver] += r.Reflected
			// 3 s at 1,000 pps, give or take the pacing's start and end.
			if r.Sent < 2900 || r.Sent > 3100 {
				t.Errorf("flow %s→%s: latency stream sent %d, want about 3,000", f.Sender, f.Receiver, r.Sent)
			}
			if drops == 0 && (r.Received != r.Sent || r.Reflected != r.Sent || r.Returned != r.Sent) {
				t.Errorf("flow %s→%s: latency stream sent %d, received %d, reflected %d, returned %d: want all equal, the switch dropped nothing",
					f.Sender, f.Receiver, r.Sent, r.Received, r.Reflected, r.Returned)
			}
			l := r.Latency
			if l == nil || l.Samples() != r.Returned || l.Clock != latency.SameHost || l.Negative != 0 || l.Absurd != 0 || l.MinUs == 0 {
				t.Fatalf("flow %s→%s: round trips %+v, want one sample per return (%d), same-host, none negative", f.Sender, f.Receiver, l, r.Returned)
			}
			if r.Lowest == nil || len(r.Lowest.PerSecondUs) < 3 || r.Lowest.MinUs != l.MinUs {
				t.Errorf("flow %s→%s: lowest per second %+v: want one for each of 3 s, the least the run's minimum %d µs", f.Sender, f.Receiver, r.Lowest, l.MinUs)
			}
			m := l.Summary()
			t.Logf("FIGURE rtt %s→%s: %d round trips, min %.0f p50 %.0f p99 %.0f max %.0f µs; lowest per second %v µs",
				f.Sender, f.Receiver, r.Returned, m.MinUs, m.P50Us, m.P99Us, m.MaxUs, r.Lowest.PerSecondUs)
		}
		if lost != drops {
			t.Errorf("the load's and the latency streams' losses %d, the switch dropped %d: want equal", lost, drops)
		}
		for _, p := range res.Lab.SwitchPorts {
			if n, ok := reflected[p.Name]; ok && p.TestPackets != n {
				t.Errorf("switch port %s counted %d test frames from its receiver, the receiver reflected %d", p.Name, p.TestPackets, n)
			}
		}
	})
	// Turned round (--reverse), the named receiver sends the load and the
	// latency stream, the named sender reflects it: the latency stream's
	// port follows the sending host's, and the books are as whole.
	t.Run("reverse", func(t *testing.T) {
		res := labRun(t, bin, lab("w"), "--reverse", "--senders", "1", "--receivers", "1", "--duration", "2s", "--rate", "10000",
			"--latency", "rtt", "--rtt-rate", "1000")
		if len(res.Flows) != 1 {
			t.Fatalf("%d flows", len(res.Flows))
		}
		f := res.Flows[0]
		r := f.RTT
		if f.Sender != "r1" || f.Receiver != "s1" || f.Direction != coordinator.Reverse || r == nil || r.Latency == nil {
			t.Fatalf("flow %s→%s (%s): round trips %+v", f.Sender, f.Receiver, f.Direction, r)
		}
		if r.Sent < 1900 || r.Received != r.Sent || r.Reflected != r.Sent || r.Returned != r.Sent || r.Latency.Clock != latency.SameHost || r.Latency.Negative != 0 {
			t.Errorf("reverse: latency stream %+v: want about 2,000 sent, every one received, reflected and returned, same-host", *r)
		}
		if lost := f.Lost + r.LostOut + r.LostBack; lost != res.Lab.Drops() || f.Received+f.Lost != f.Sent {
			t.Errorf("reverse: lost %d (load %d of %d), the switch dropped %d", lost, f.Lost, f.Sent, res.Lab.Drops())
		}
	})
	t.Run("off", func(t *testing.T) {
		res := labRun(t, bin, lab("v"), "--senders", "1", "--receivers", "1", "--count", "5000", "--rate", "10000", "--latency", "off")
		exact(t, res, 1, 5000)
		if f := res.Flows[0]; res.Latency != coordinator.LatencyOff || f.Latency != nil || f.RTT != nil || f.StreamDetail[0].Latency != nil {
			t.Errorf("latency off: mode %q, flow latency %+v, round trips %+v, stream latency %+v", res.Latency, f.Latency, f.RTT, f.StreamDetail[0].Latency)
		}
	})
	t.Run("loss-every-100", func(t *testing.T) {
		res := labRun(t, bin, lab("u"), "--senders", "1", "--receivers", "1", "--count", "20000", "--rate", "10000",
			"--backend", "afpacket", "--loss-every", "100", "--latency", "rtt", "--rtt-rate", "1000")
		f := res.Flows[0]
		r := f.RTT
		if r == nil {
			t.Fatal("no round trips")
		}
		var port coordinator.PortTruth
		for _, p := range res.Lab.SwitchPorts {
			if p.Name == f.Sender {
				port = p
			}
		}
		// Every test frame through the sender's port is the load's or the
		// latency stream's; the port dropped every 100th of them.
		if port.TestPackets != f.Sent+r.Sent || port.ProgDrops != port.TestPackets/100 {
			t.Errorf("sender port: %d test frames (%d dropped); the load sent %d, the latency stream %d", port.TestPackets, port.ProgDrops, f.Sent, r.Sent)
		}
		if f.Lost+r.LostOut != res.Lab.Drops() || r.LostBack != 0 || r.Returned != r.Reflected || r.Reflected != r.Received || r.LostOut == 0 {
			t.Errorf("load lost %d, latency stream lost %d out and %d back (received %d, reflected %d, returned %d); the switch dropped %d",
				f.Lost, r.LostOut, r.LostBack, r.Received, r.Reflected, r.Returned, res.Lab.Drops())
		}
		t.Logf("FIGURE rtt books under loss: the switch dropped %d: %d of the load's %d, %d of the latency stream's %d", res.Lab.Drops(), f.Lost, f.Sent, r.LostOut, r.Sent)
	})
}
