//go:build linux && traffic

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/vishvananda/netlink"

	"github.com/linerate/linerate/latency"
	"github.com/linerate/linerate/pktgen"
	"github.com/linerate/linerate/receiver"
)

// netemDelay is the delay the one-clock proof puts on the path.
const netemDelay = 20 * time.Millisecond

// One clock, exact: in the guest, `linerate send` (the kernel's pktgen,
// xmit_mode queue_xmit so that its frames pass the qdisc) through a veth
// whose egress netem delays every frame by 20 ms, into `linerate recv
// --clock same-host` on the peer, with each receive method. Every packet
// has a delay; none is shorter than netem's D less 10 µs, the shortest
// is within D + 10 % + 50 µs (pktgen stamps a paced frame before its
// pacing wait, up to one gap early: 200 µs at 5 kpps, inside that), and
// the median within D + 25 %.
func TestGuestLatencyNetem(t *testing.T) {
	mac := guestVeth(t)
	l, err := netlink.LinkByName("lrsd0")
	if err != nil {
		t.Fatal(err)
	}
	netem := netlink.NewNetem(netlink.QdiscAttrs{LinkIndex: l.Attrs().Index, Handle: netlink.MakeHandle(1, 0), Parent: netlink.HANDLE_ROOT},
		netlink.NetemQdiscAttrs{Latency: uint32(netemDelay / time.Microsecond), Limit: 10000})
	if err := netlink.QdiscAdd(netem); err != nil {
		t.Fatalf("netem on lrsd0: %v", err)
	}
	t.Cleanup(func() { _ = netlink.QdiscDel(netem) })
	const count = 2000
	for _, method := range []string{"xdp", "afpacket"} {
		t.Run(method, func(t *testing.T) {
			rep := recvWhile(t, []string{"recv", "--iface", "lrsd1", "--method", method, "--until-idle", "1s", "--clock", "same-host", "--json"}, func() {
				code, out, errOut := linerate(t, "send", "--iface", "lrsd0", "--dst", "198.18.0.2", "--src", "198.18.1.1", "--dst-mac", mac,
					"--count", "2000", "--rate", "5000", "--xmit-mode", "queue_xmit", "--backend", "kernel", "--json")
				if code != 0 {
					t.Fatalf("send exit %d: %s %s", code, out, errOut)
				}
			})
			if len(rep.Streams) != 1 || rep.Streams[0].Received != count || rep.Streams[0].Latency == nil {
				t.Fatalf("received %+v", rep.Streams)
			}
			lat := rep.Streams[0].Latency
			s := lat.Summary()
			t.Logf("%s: netem %v: %+v", method, netemDelay, s)
			d := float64(netemDelay / time.Microsecond)
			if s.Samples != count || s.Negative != 0 || s.Absurd != 0 || lat.Clock != latency.SameHost {
				t.Errorf("latency %+v on %s: want %d samples on one clock", s, lat.Clock, count)
			}
			// The shortest delay is netem's D to within 10 %: that is the
			// measurement's accuracy. The median may carry more: a TCG
			// guest under load wakes netem's timer and the AF_PACKET
			// reader late (CI saw 23.8 ms through 20 ms), real delays.
			if s.MinUs < d-10 || s.MinUs > 1.1*d+50 || s.P50Us < d || s.P50Us > 1.25*d {
				t.Errorf("netem %v: min %v µs, p50 %v µs; want min in [%v, %v], p50 in [%v, %v]", netemDelay, s.MinUs, s.P50Us, d-10, 1.1*d+50, d, 1.25*d)
			}
		})
	}
	// Paced at 500 pps, a 2 ms gap: pktgen stamps each frame before it
	// waits out the gap, so the delays as received are about a gap too
	// long; the wait pktgen measured (its idle time) is most of the gap,
	// and taken off (what the coordinator does: latency.StampsEarly) the
	// median lands on netem's D again.
	t.Run("paced", func(t *testing.T) {
		const rate, paced = 500, 1000
		gap := float64(time.Second/rate) / float64(time.Microsecond)
		var sum pktgen.Summary
		rep := recvWhile(t, []string{"recv", "--iface", "lrsd1", "--method", "xdp", "--until-idle", "1s", "--clock", "same-host", "--json"}, func() {
			code, out, errOut := linerate(t, "send", "--iface", "lrsd0", "--dst", "198.18.0.2", "--src", "198.18.1.1", "--dst-mac", mac,
				"--count", fmt.Sprint(paced), "--rate", fmt.Sprint(rate), "--xmit-mode", "queue_xmit", "--backend", "kernel", "--json")
			if code != 0 {
				t.Fatalf("send exit %d: %s %s", code, out, errOut)
			}
			if err := json.Unmarshal([]byte(out), &sum); err != nil {
				t.Fatalf("send JSON: %v\n%s", err, out)
			}
		})
		if len(rep.Streams) != 1 || rep.Streams[0].Received != paced || rep.Streams[0].Latency == nil || len(sum.Threads) != 1 {
			t.Fatalf("received %+v, sent %+v", rep.Streams, sum.Threads)
		}
		th := sum.Threads[0]
		wait := float64(th.PacingWaitUSec) / float64(th.Packets)
		raw := rep.Streams[0].Latency
		fixed := raw.StampsEarly(wait)
		d := float64(netemDelay / time.Microsecond)
		t.Logf("gap %v µs, mean wait %.0f µs; p50 as received %v µs, corrected %v µs", gap, wait, raw.Summary().P50Us, fixed.Summary().P50Us)
		if wait < gap/2 || wait > gap {
			t.Errorf("pktgen waited %.0f µs a frame at a %v µs gap: want most of the gap", wait, gap)
		}
		if p := raw.Summary().P50Us; p < d+gap/2 {
			t.Errorf("p50 as received %v µs: the early stamp should show, want ≥ %v", p, d+gap/2)
		}
		if p := fixed.Summary().P50Us; p < d-100 || p > 1.1*d+50 {
			t.Errorf("p50 with the wait taken off %v µs: want netem's %v µs within [-100, +10 %% + 50]", p, d)
		}
	})
}

// recvWhile runs `linerate recv` (args) in this process, calls send once
// it is armed, and returns its report.
func recvWhile(t *testing.T, args []string, send func()) *receiver.Report {
	t.Helper()
	var out bytes.Buffer
	errOut := &syncBuffer{}
	done := make(chan int, 1)
	go func() { done <- run(context.Background(), args, &out, errOut) }()
	for deadline := time.Now().Add(20 * time.Second); !strings.Contains(errOut.String(), "armed: counting"); time.Sleep(20 * time.Millisecond) {
		select {
		case code := <-done:
			t.Fatalf("recv exit %d before it was armed: %s", code, errOut.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("recv not armed after 20 s: %s", errOut.String())
		}
	}
	send()
	var code int
	select {
	case code = <-done:
	case <-time.After(time.Minute):
		t.Fatalf("recv did not stop: %s", errOut.String())
	}
	if code != 0 {
		t.Fatalf("recv exit %d: %s", code, errOut.String())
	}
	var rep receiver.Report
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("recv JSON: %v\n%s", err, out.String())
	}
	return &rep
}
