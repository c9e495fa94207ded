//go:build linux && traffic

package receiver

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/linerate/linerate/internal/netns"
	"github.com/linerate/linerate/internal/netns/nstest"
	"github.com/linerate/linerate/latency"
	"github.com/linerate/linerate/pktgen"
)

// testLogger writes the receiver's log into the test's.
func testLogger(t *testing.T) hclog.Logger {
	return hclog.New(&hclog.LoggerOptions{Name: t.Name(), Level: hclog.Debug, Output: testWriter{t}})
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// withMACs returns the frame with its Ethernet addresses set.
func withMACs(f []byte, dst, src net.HardwareAddr) []byte {
	copy(f[0:6], dst)
	copy(f[6:12], src)
	return f
}

// sendFrames sends frames out of link l (namespace A) with a raw packet
// socket, in order, from one CPU (so that the peer's receive processing,
// which runs on the sending CPU for a veth, keeps them in order).
func sendFrames(t *testing.T, l *netns.Link, frames [][]byte) {
	t.Helper()
	err := l.NS.Do(func() error {
		var old, one unix.CPUSet
		if err := unix.SchedGetaffinity(0, &old); err != nil {
			return err
		}
		for c := 0; ; c++ {
			if old.IsSet(c) {
				one.Set(c)
				break
			}
		}
		if err := unix.SchedSetaffinity(0, &one); err != nil {
			return err
		}
		defer unix.SchedSetaffinity(0, &old) // the thread goes back to the pool
		fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		sa := &unix.SockaddrLinklayer{Ifindex: l.Index, Halen: 6}
		for i, f := range frames {
			if err := unix.Sendto(fd, stamped(f), 0, sa); err != nil {
				return fmt.Errorf("send frame %d: %w", i, err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// scenario is two streams with deliberate gaps, duplicates and reordering,
// plus frames that are not test packets.
func scenario(p *nstest.Pair) (frames [][]byte, other int) {
	src2 := netip.MustParseAddr("198.18.0.11")
	// Stream 1, port 9: 1..1000 without 400..449; 5 twice more; 700 after 710.
	var s1 []uint32
	for s := uint32(1); s <= 1000; s++ {
		switch {
		case s >= 400 && s <= 449, s == 700:
		case s == 710:
			s1 = append(s1, 710, 700)
		case s == 5:
			s1 = append(s1, 5, 5, 5)
		default:
			s1 = append(s1, s)
		}
	}
	// Stream 2 from .11, port 10: head loss (1, 2), 250 twice, 301 before 300, tail at 500.
	var s2 []uint32
	for s := uint32(3); s <= 500; s++ {
		switch s {
		case 250:
			s2 = append(s2, 250, 250)
		case 300:
			s2 = append(s2, 301, 300)
		case 301:
		default:
			s2 = append(s2, s)
		}
	}
	mac := func(f []byte) []byte { return withMACs(f, p.B.MAC, p.A.MAC) }
	// Interleave the streams, with non-test frames among them.
	for i := 0; i < max(len(s1), len(s2)); i++ {
		if i < len(s1) {
			frames = append(frames, mac(testFrame{port: 9, seq: s1[i]}.bytes()))
		}
		if i < len(s2) {
			frames = append(frames, mac(testFrame{src: src2, port: 10, seq: s2[i]}.bytes()))
		}
		if i%300 == 0 {
			frames = append(frames, mac(testFrame{noMagic: true}.bytes()), mac(testFrame{arp: true}.bytes()))
			other += 2
		}
	}
	return frames, other
}

// oracle is what the Go core counts of frames fed in order with o: the
// streams (with missing ranges) and the overflow.
func oracle(t *testing.T, o Options, frames [][]byte) (streams []StreamReport, overflow uint64) {
	t.Helper()
	oo, err := o.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	tab := newTable(oo)
	for _, f := range frames {
		tab.Add(f)
	}
	streams, _, overflow = tab.counts(true, oo.MaxRanges)
	return streams, overflow
}

// startIn starts a receiver inside the link's namespace.
func startIn(t *testing.T, ctx context.Context, l *netns.Link, o Options) *Receiver {
	t.Helper()
	o.Iface = l.Name
	if o.Logger == nil {
		o.Logger = testLogger(t)
	}
	var r *Receiver
	if err := l.NS.Do(func() (err error) {
		r, err = Start(ctx, o)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// xdpAttached reports whether an XDP program is attached to l.
func xdpAttached(t *testing.T, l *netns.Link) bool {
	t.Helper()
	var on bool
	if err := l.NS.Do(func() error {
		link, err := netlink.LinkByName(l.Name)
		if err != nil {
			return err
		}
		x := link.Attrs().Xdp
		on = x != nil && (x.Attached || x.ProgId != 0)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return on
}

// packetSockets counts the packet sockets bound to l, from
// /proc/thread-self/net/packet inside its namespace.
func packetSockets(t *testing.T, l *netns.Link) int {
	t.Helper()
	var n int
	if err := l.NS.Do(func() error {
		f, err := os.Open("/proc/thread-self/net/packet")
		if err != nil {
			return err
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Scan() // header: sk RefCnt Type Proto Iface R Rmem User Inode
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) > 4 {
				if idx, err := strconv.Atoi(fields[4]); err == nil && idx == l.Index {
					n++
				}
			}
		}
		return sc.Err()
	}); err != nil {
		t.Fatal(err)
	}
	return n
}

// stamped returns a copy of frame f whose pktgen header (if it has one)
// carries the send time now, as a generator stamps it.
func stamped(f []byte) []byte {
	var k streamKey
	seq, _, ok := parseFrame(f, &k)
	if !ok {
		return f
	}
	b := slices.Clone(f)
	now := time.Now()
	for off := 14; off+pktgen.HeaderLen <= len(b); off++ {
		if binary.BigEndian.Uint32(b[off:]) == pktgen.Magic && binary.BigEndian.Uint32(b[off+4:]) == seq {
			binary.BigEndian.PutUint32(b[off+8:], uint32(now.Unix()))
			binary.BigEndian.PutUint32(b[off+12:], uint32(now.Nanosecond()/1000))
			return b
		}
	}
	return f
}

// waitFor polls the receiver until it has seen want test packets.
func waitFor(t *testing.T, r *Receiver, want uint64) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		s := r.Snapshot()
		if s.TestPackets() >= want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 5s the receiver has %d of %d test packets", s.TestPackets(), want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestReceiveNetns(t *testing.T) {
	for _, method := range []Method{MethodXDP, MethodAFPacket, MethodAFXDP} {
		t.Run(string(method), func(t *testing.T) {
			p := nstest.NewPair(t, 2)
			frames, other := scenario(p)
			// The oracle: the Go core fed the same frames in the same order.
			o := Options{Iface: "oracle", Method: method, Window: 1 << 16}
			want, _ := oracle(t, o, frames)
			var test uint64
			for _, s := range want {
				test += s.Received
			}

			o.Clock = latency.SameHost
			r := startIn(t, t.Context(), p.B, o)
			if m, why := r.Method(); m != method {
				t.Fatalf("method %s (%s), want %s", m, why, method)
			}
			if method != MethodAFPacket && !xdpAttached(t, p.B) {
				t.Fatal("no XDP program on lrb after Start")
			}
			if method == MethodAFPacket {
				if n := packetSockets(t, p.B); n == 0 {
					t.Fatal("no packet socket on lrb after Start")
				}
			}
			sent := time.Now()
			sendFrames(t, p.A, frames)
			done := time.Now()
			waitFor(t, r, test)
			rep, err := r.Stop()
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: %s; link %+v; ring drops %d", rep.Method, rep.MethodReason, rep.Link, rep.RingDrops)
			// Each stream's first arrival is on the realtime clock, while
			// its frames were being sent (a millisecond either side for
			// the clocks' reading).
			for _, s := range rep.Streams {
				at := time.Unix(0, int64(s.FirstArrivalNs))
				if at.Before(sent.Add(-time.Millisecond)) || at.After(done.Add(time.Millisecond)) {
					t.Errorf("stream %v:%d: first arrival %v, sent from %v to %v", s.Src, s.DstPort, at.Format(time.StampMicro), sent.Format(time.StampMicro), done.Format(time.StampMicro))
				}
			}

			// Every packet has its delay, on this host's one clock: never
			// negative, never longer than the sending took (and a
			// millisecond for the clocks' reading).
			for _, s := range rep.Streams {
				l := s.Latency
				t.Logf("stream %v:%d: latency %s", s.Src, s.DstPort, latencyJSON(l))
				if l == nil || l.Samples() != s.Received || l.Negative != 0 || l.Absurd != 0 || l.Clock != latency.SameHost ||
					float64(l.MaxUs) > float64(done.Sub(sent).Microseconds())+1000 {
					t.Errorf("stream %v:%d: latency %s over %d packets sent in %v", s.Src, s.DstPort, latencyJSON(l), s.Received, done.Sub(sent))
				}
			}

			// Hand-checked expectations, then the oracle.
			s1 := netip.MustParseAddr("198.18.0.1")
			for _, s := range rep.Streams {
				switch {
				case s.Src == s1 && s.DstPort == 9:
					if s.Received != 952 || s.MaxSeq != 1000 || s.Duplicates != 2 || s.Reordered != 1 || s.Missing != 50 || !slices.Equal(s.MissingRanges, [][2]uint64{{400, 449}}) {
						t.Errorf("stream 1: %+v", s)
					}
				case s.DstPort == 10:
					if s.Received != 499 || s.MaxSeq != 500 || s.Duplicates != 1 || s.Reordered != 1 || s.Missing != 2 || !slices.Equal(s.MissingRanges, [][2]uint64{{1, 2}}) {
						t.Errorf("stream 2: %+v", s)
					}
				}
			}
			if d := diffStreams(want, rep.Streams); d != "" {
				t.Errorf("streams (-oracle +receiver):\n%s", d)
			}
			if rep.OtherPackets != uint64(other) || rep.Packets != test+uint64(other) || rep.OverflowPackets != 0 {
				t.Errorf("packets %d other %d overflow %d; want %d, %d, 0", rep.Packets, rep.OtherPackets, rep.OverflowPackets, test+uint64(other), other)
			}
			total := uint64(len(frames))
			switch method {
			case MethodXDP:
				// A veth counts the frames its XDP program saw only in
				// rx_queue_N_xdp_packets; the dropped test frames in xdp_drops.
				if rep.Link.XDPPackets != total || rep.Link.XDPDrops != test {
					t.Errorf("link %+v: want xdp_packets %d, xdp_drops %d", rep.Link, total, test)
				}
			case MethodAFPacket:
				if rep.Link.RxPackets < total || rep.RingDrops != 0 {
					t.Errorf("link %+v ring drops %d: want rx_packets >= %d, no ring drops", rep.Link, rep.RingDrops, total)
				}
			case MethodAFXDP:
				// The redirect program saw every frame; none was dropped
				// for want of room in a socket.
				if rep.Link.XDPPackets != total || rep.RingDrops != 0 {
					t.Errorf("link %+v ring drops %d: want xdp_packets %d, no ring drops", rep.Link, rep.RingDrops, total)
				}
			}
			// The spread: every packet of a stream on some queue, as many
			// as it received (a method that knows the queue), none said
			// by one that does not.
			for _, s := range rep.Streams {
				var on uint64
				for _, q := range s.Queues {
					on += q.Packets
				}
				if method.KnowsQueues() && on != s.Received || !method.KnowsQueues() && s.Queues != nil {
					t.Errorf("stream %v:%d: queues %+v, received %d", s.Src, s.DstPort, s.Queues, s.Received)
				}
			}
			// Detached and closed.
			if xdpAttached(t, p.B) {
				t.Error("an XDP program is still attached to lrb after Stop")
			}
			if n := packetSockets(t, p.B); n != 0 {
				t.Errorf("%d packet sockets still bound to lrb after Stop", n)
			}
			// Stop again: the same report.
			if again, err := r.Stop(); err != nil || again != rep {
				t.Errorf("second Stop: %p %v, want the first report", again, err)
			}
		})
	}
}

func diffStreams(want, got []StreamReport) string {
	if len(want) != len(got) {
		return fmt.Sprintf("%d streams, want %d: %+v", len(got), len(want), got)
	}
	var b strings.Builder
	for i := range want {
		w, g := want[i], got[i]
		if w.Src != g.Src || w.Dst != g.Dst || w.DstPort != g.DstPort || w.Received != g.Received || w.MaxSeq != g.MaxSeq ||
			w.Duplicates != g.Duplicates || w.Reordered != g.Reordered || w.Missing != g.Missing || !slices.Equal(w.MissingRanges, g.MissingRanges) ||
			w.Late != g.Late || w.MissingRangesFrom != g.MissingRangesFrom || g.Unrecorded != 0 {
			fmt.Fprintf(&b, "- %+v\n+ %+v\n", w, g)
		}
	}
	return b.String()
}

// TestCancelDetaches checks that a receiver whose context is cancelled
// after Start detaches by itself, and that Stop still returns a report.
func TestCancelDetaches(t *testing.T) {
	for _, method := range []Method{MethodXDP, MethodAFPacket, MethodAFXDP} {
		t.Run(string(method), func(t *testing.T) {
			p := nstest.NewPair(t, 1)
			ctx, cancel := context.WithCancel(t.Context())
			r := startIn(t, ctx, p.B, Options{Method: method, Window: 1 << 10})
			sendFrames(t, p.A, [][]byte{withMACs(testFrame{seq: 1}.bytes(), p.B.MAC, p.A.MAC)})
			waitFor(t, r, 1)
			cancel()
			deadline := time.Now().Add(2 * time.Second)
			for xdpAttached(t, p.B) || packetSockets(t, p.B) != 0 {
				if time.Now().After(deadline) {
					t.Fatal("still attached 2s after the context was cancelled")
				}
				time.Sleep(10 * time.Millisecond)
			}
			rep, err := r.Stop()
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Streams) != 1 || rep.Streams[0].Received != 1 {
				t.Errorf("report after cancel: %+v", rep.Streams)
			}
		})
	}
}

// TestCloseDetaches checks that Close (the error path) detaches, that auto
// picks XDP on a veth, and that a missing interface is ErrNoInterface.
func TestCloseDetaches(t *testing.T) {
	p := nstest.NewPair(t, 1)
	r := startIn(t, t.Context(), p.B, Options{Method: MethodAuto, Window: 1 << 10})
	if m, why := r.Method(); m != MethodXDP || !strings.Contains(why, "native") {
		t.Errorf("auto on a veth: %s (%s), want xdp in native mode", m, why)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if xdpAttached(t, p.B) {
		t.Error("XDP program still attached after Close")
	}
	if err := r.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	err := p.B.NS.Do(func() error {
		_, err := Start(t.Context(), Options{Iface: "nosuch0"})
		return err
	})
	if !errors.Is(err, ErrNoInterface) {
		t.Errorf("Start on a missing interface: %v, want ErrNoInterface", err)
	}
}

// TestXDPGenericOnLoopback checks that on lo, which has no native XDP, the
// program attaches in generic (SKB) mode and says so, and that it counts
// datagrams the kernel itself built (a UDP socket to 127.0.0.1) exactly.
func TestXDPGenericOnLoopback(t *testing.T) {
	p := nstest.NewPair(t, 1)
	lo := &netns.Link{NS: p.B.NS, Name: "lo", Index: 1}
	r := startIn(t, t.Context(), lo, Options{Method: MethodXDP, Window: 1 << 10})
	if m, why := r.Method(); m != MethodXDP || !strings.Contains(why, "generic (SKB) mode") {
		t.Fatalf("method %s (%s), want xdp in generic mode", m, why)
	}
	err := p.B.NS.Do(func() error {
		c, err := net.DialUDP("udp4", nil, &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 7777})
		if err != nil {
			return err
		}
		defer c.Close()
		payload := make([]byte, 18)
		for _, s := range []uint32{1, 2, 3, 5, 5, 4, 6} {
			binary.BigEndian.PutUint32(payload[0:], 0xbe9be955)
			binary.BigEndian.PutUint32(payload[4:], s)
			if _, err := c.Write(payload); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, r, 7)
	rep, err := r.Stop()
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Streams) != 1 {
		t.Fatalf("streams %+v", rep.Streams)
	}
	s := rep.Streams[0]
	if s.Src.String() != "127.0.0.1" || s.DstPort != 7777 || s.Received != 7 || s.MaxSeq != 6 || s.Duplicates != 1 || s.Reordered != 1 || s.Missing != 0 {
		t.Errorf("stream %+v", s)
	}
	if rep.Link.RxPackets < 7 {
		t.Errorf("link %+v: lo's rx_packets should count the datagrams", rep.Link)
	}
}
