//go:build linux && traffic

package receiver

import (
	"context"
	"encoding/binary"
	"net/netip"
	"testing"
	"time"

	"github.com/vishvananda/netlink"

	"github.com/linerate/linerate/internal/netns"
	"github.com/linerate/linerate/internal/netns/nstest"
	"github.com/linerate/linerate/latency"
)

// rttFrames are n test frames of a latency stream from the pair's A to B
// (UDP port rttPort) with UDP source port sport, size bytes each: the
// port their reflections come back to.
func rttFrames(p *nstest.Pair, sport uint16, size, n int) [][]byte {
	frames := make([][]byte, n)
	for i := range frames {
		f := withMACs(testFrame{port: rttPort, seq: uint32(i + 1), size: size}.bytes(), p.B.MAC, p.A.MAC)
		binary.BigEndian.PutUint16(f[14+20:], sport)
		frames[i] = f
	}
	return frames
}

const rttPort = 10100

// streamTo is r's stream from src on port (nil: none).
func streamTo(r Report, src netip.Addr, port uint16) *StreamReport {
	for i := range r.Streams {
		if s := &r.Streams[i]; s.Src == src && s.DstPort == port {
			return s
		}
	}
	return nil
}

// waitStream polls r until its stream from src on port has want packets.
func waitStream(t *testing.T, r *Receiver, src netip.Addr, port uint16, want uint64) Report {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		rep := r.Snapshot()
		if s := streamTo(rep, src, port); s != nil && s.Received >= want {
			return rep
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 5s the stream %v:%d has not %d packets: %+v", src, port, want, rep.Streams)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// shapeEgress puts a tbf qdisc on l's egress: rate bytes per second, a
// bucket of burst bytes, room for limit bytes queued.
func shapeEgress(t *testing.T, l *netns.Link, rate, burst, limit uint32) {
	t.Helper()
	if err := l.NS.Do(func() error {
		link, err := netlink.LinkByName(l.Name)
		if err != nil {
			return err
		}
		// tbf's buffer is the time to send the burst at the rate, in the
		// packet scheduler's 64 ns ticks (as the lab's shaper gives it).
		return netlink.QdiscAdd(&netlink.Tbf{
			QdiscAttrs: netlink.QdiscAttrs{LinkIndex: link.Attrs().Index, Handle: netlink.MakeHandle(1, 0), Parent: netlink.HANDLE_ROOT},
			Rate:       uint64(rate), Limit: limit, Buffer: uint32(uint64(burst) * 1e9 / uint64(rate) / 64),
		})
	}); err != nil {
		t.Fatalf("shape %s: %v", l.Name, err)
	}
}

// TestRTTReflectNetns is a round trip on real veths in two namespaces:
// B's receiver counts a latency stream and reflects it (XDP_TX), A's
// receiver (XDP, on A's own clock) counts what comes back, and its
// delays are round-trip times on one clock. Known truth: every frame
// sent is received, reflected and returned (received == reflected ==
// returned == sent), the round trips are never negative and their clock
// is same-host; the lowest per second is one per second that had frames.
// Then a tbf on A's egress at 1 ms per 1000-byte frame with a bucket of
// 1,500 bytes delays the k-th frame of a burst by (k − 0.5) ms: the
// burst's longest round trip is that of its last frame, (K − 1.5) ms
// less the time its frames took to hand to the socket, within 1 ms (the
// path, the hosts' scheduling and the histogram's exact maximum).
func TestRTTReflectNetns(t *testing.T) {
	p := nstest.NewPair(t, 1)
	ctx := context.Background()
	rx := startIn(t, ctx, p.B, Options{Method: MethodXDP, Window: MinWindow, Reflect: []uint16{rttPort}})
	meter := startIn(t, ctx, p.A, Options{Method: MethodXDP, Window: MinWindow, Clock: latency.SameHost})
	a, b := p.A.Addr.Addr(), p.B.Addr.Addr()

	// Three seconds of 500 frames each, the returns read each second.
	const sport, perSecond, seconds = 40000, 500, 3
	frames := rttFrames(p, sport, 0, perSecond*seconds)
	var lowest []uint64
	var before latency.Histogram
	for s := range seconds {
		start := time.Now()
		sendFrames(t, p.A, frames[s*perSecond:(s+1)*perSecond])
		rep := waitStream(t, meter, b, sport, uint64((s+1)*perSecond))
		now := streamTo(rep, b, sport).Latency.Histogram
		if us, ok := latency.LowestBetween(&before, &now); ok {
			lowest = append(lowest, us)
		}
		before = now
		time.Sleep(time.Second - time.Since(start))
	}
	const n = perSecond * seconds
	got, err := meter.Stop()
	if err != nil {
		t.Fatal(err)
	}
	reflected, err := rx.Stop()
	if err != nil {
		t.Fatal(err)
	}
	out, back := streamTo(*reflected, a, rttPort), streamTo(*got, b, sport)
	if out == nil || back == nil {
		t.Fatalf("streams: B %+v; A %+v", reflected.Streams, got.Streams)
	}
	if out.Received != n || out.Reflected != n || back.Received != n || back.Missing != 0 || back.Duplicates != 0 {
		t.Errorf("sent %d; B received %d, reflected %d; A got back %d (missing %d, duplicates %d)",
			n, out.Received, out.Reflected, back.Received, back.Missing, back.Duplicates)
	}
	l := back.Latency
	if l == nil || l.Samples() != n || l.Negative != 0 || l.Absurd != 0 || l.Clock != latency.SameHost || l.MinUs == 0 {
		t.Fatalf("round trips %s: want %d samples, none negative or absurd, on the same host", latencyJSON(l), n)
	}
	sum := l.Summary()
	t.Logf("FIGURE rtt over veth: %d round trips, min %.0f µs, p50 %.0f µs, p99 %.0f µs, max %.0f µs; lowest per second %v µs",
		n, sum.MinUs, sum.P50Us, sum.P99Us, sum.MaxUs, lowest)
	if len(lowest) != seconds {
		t.Errorf("lowest per second %v: want one for each of %d seconds", lowest, seconds)
	}
	for _, us := range lowest {
		if us < l.MinUs || us > l.MaxUs {
			t.Errorf("lowest per second %v: %d µs outside the run's [%d, %d]", lowest, us, l.MinUs, l.MaxUs)
		}
	}

	// With ReflectVLAN, an untagged frame goes back with the tag pushed
	// on (the head grown by 4 bytes, the addresses moved): A's receiver
	// parses and counts every return, their round trips timed. That the
	// tag is on the wire is the lab's switch count (TestLabRunIPv6VLAN).
	t.Run("vlan", func(t *testing.T) {
		rx := startIn(t, ctx, p.B, Options{Method: MethodXDP, Window: MinWindow, Reflect: []uint16{rttPort}, ReflectVLAN: 100})
		meter := startIn(t, ctx, p.A, Options{Method: MethodXDP, Window: MinWindow, Clock: latency.SameHost})
		const k = 300
		sendFrames(t, p.A, rttFrames(p, sport+2, 0, k))
		waitStream(t, meter, b, sport+2, k)
		got, err := meter.Stop()
		if err != nil {
			t.Fatal(err)
		}
		r, err := rx.Stop()
		if err != nil {
			t.Fatal(err)
		}
		out, back := streamTo(*r, a, rttPort), streamTo(*got, b, sport+2)
		if out == nil || out.Reflected != k || back == nil || back.Received != k || back.Missing != 0 || back.Latency == nil || back.Latency.Samples() != k {
			t.Errorf("sent %d untagged: B %+v; A got back %+v", k, out, back)
		}
	})

	t.Run("tbf", func(t *testing.T) {
		rx := startIn(t, ctx, p.B, Options{Method: MethodXDP, Window: MinWindow, Reflect: []uint16{rttPort}})
		meter := startIn(t, ctx, p.A, Options{Method: MethodXDP, Window: MinWindow, Clock: latency.SameHost})
		const size, k, perFrame = 1000, 21, time.Millisecond
		shapeEgress(t, p.A, size*uint32(time.Second/perFrame), 1500, 2*size*k)
		frames := rttFrames(p, sport+1, size, k)
		start := time.Now()
		sendFrames(t, p.A, frames)
		spread := time.Since(start)
		waitStream(t, meter, b, sport+1, k)
		got, err := meter.Stop()
		if err != nil {
			t.Fatal(err)
		}
		if r, err := rx.Stop(); err != nil {
			t.Fatal(err)
		} else if s := streamTo(*r, a, rttPort); s == nil || s.Received != k || s.Reflected != k {
			t.Errorf("B: %+v, want %d received and reflected", s, k)
		}
		l := streamTo(*got, b, sport+1).Latency
		want := time.Duration(2*k-3) * perFrame / 2
		lo, hi := want-spread, want+time.Millisecond
		maxRTT := time.Duration(l.MaxUs) * time.Microsecond
		t.Logf("FIGURE rtt behind tbf: burst of %d × %d-byte frames at 1 ms each: max %v (want %v, %v to %v: the socket took %v), min %v",
			k, size, maxRTT, want, lo, hi, spread, time.Duration(l.MinUs)*time.Microsecond)
		if l.Samples() != k || l.Negative != 0 || maxRTT < lo || maxRTT > hi {
			t.Errorf("round trips %s: the longest %v, want %v to %v", latencyJSON(l), maxRTT, lo, hi)
		}
		if minRTT := time.Duration(l.MinUs) * time.Microsecond; minRTT > perFrame {
			t.Errorf("the first frame's round trip %v: the bucket let it through, want under %v", minRTT, perFrame)
		}
	})
}
