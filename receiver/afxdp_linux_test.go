//go:build linux && traffic

package receiver

import (
	"errors"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/vishvananda/netlink"

	"github.com/linerate/linerate/internal/netns/nstest"
	"github.com/linerate/linerate/pktgen"
)

// TestAFXDPQueues: the afxdp method on a veth of two receive queues, with
// need_wakeup as auto chooses it (off: a virtual device) and forced on.
// Two streams, each sent from its own CPU (a veth hands an XDP frame to
// the queue of the sending CPU), are counted exactly, each on its own
// queue, and the spread says so; then one stream sent from both CPUs at
// once (one sequence counter) is exact across the two sockets
// (duplicates none, missing what did not arrive), half on each queue.
// Every frame the redirect program saw is counted: n frames per queue fit
// a socket's rings (xsk.DefaultRingSize), so none is dropped even when the
// sender holds the reader's CPU for the whole send.
func TestAFXDPQueues(t *testing.T) {
	if runtime.NumCPU() < 2 {
		t.Skip("needs 2 CPUs")
	}
	const n = 1500
	for _, wakeup := range []pktgen.NeedWakeup{pktgen.NeedWakeupAuto, pktgen.NeedWakeupOn} {
		t.Run("need_wakeup_"+string(wakeup), func(t *testing.T) {
			p := nstest.NewPair(t, 2)
			r := startIn(t, t.Context(), p.B, Options{Method: MethodAFXDP, NeedWakeup: wakeup, Window: 1 << 16})
			m, why := r.Method()
			wantWhy := "need_wakeup off (auto): driver veth is a virtual device"
			if wakeup == pktgen.NeedWakeupOn {
				wantWhy = "need_wakeup on: asked for"
			}
			if m != MethodAFXDP || !strings.Contains(why, "2 receive queues") || !strings.Contains(why, "copy mode") || !strings.Contains(why, wantWhy) {
				t.Fatalf("method %s (%s): want afxdp on 2 queues in copy mode, %s", m, why, wantWhy)
			}
			// Where the arrivals are stamped, as the kernel's probe said.
			wantStamp := arrivalsStamped
			if probeAdjustMeta(loadReleased) != nil {
				wantStamp = arrivalsAsRead
			}
			if !strings.HasSuffix(why, "; "+wantStamp) {
				t.Errorf("method %s (%s): want it to end %q", m, why, wantStamp)
			}
			for i, port := range []uint16{9, 10} {
				s := newLiveSender(t, false)
				if sent, _ := s.send(t, p.A, withMACs(testFrame{port: port, seq: 0}.bytes(), p.B.MAC, p.A.MAC), n, i); sent != n {
					t.Fatalf("port %d: sent %d, want %d", port, sent, n)
				}
			}
			rep, err := r.Stop()
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s; link %+v; ring drops %d", rep.MethodReason, rep.Link, rep.RingDrops)
			if rep.TestPackets() != rep.Link.XDPPackets || rep.OtherPackets != 0 || rep.HostDrops() != 0 {
				t.Errorf("counted %d test and %d other packets, %d ring drops; the veth's xdp_packets says %d", rep.TestPackets(), rep.OtherPackets, rep.RingDrops, rep.Link.XDPPackets)
			}
			if len(rep.Streams) != 2 {
				t.Fatalf("streams %+v", rep.Streams)
			}
			for i, st := range rep.Streams {
				want := []QueuePackets{{Queue: uint32(i), Packets: st.Received}}
				if st.Duplicates != 0 || st.MaxSeq-st.Missing != st.Received || st.Late != 0 || !slices.Equal(st.Queues, want) {
					t.Errorf("stream %d: %+v, want its packets on queue %d alone", st.DstPort, st, i)
				}
			}
			for _, st := range rep.Streams {
				if st.Received != n || st.Missing != 0 {
					t.Errorf("stream %d: received %d missing %d, want %d and none", st.DstPort, st.Received, st.Missing, n)
				}
			}
			if got, want := SpreadText(MethodAFXDP, rep.Streams), "q0 1 stream 1500 packets, q1 1 stream 1500 packets"; got != want {
				t.Errorf("spread %q, want %q", got, want)
			}

			// One stream from both CPUs at once, into a new receiver.
			r = startIn(t, t.Context(), p.B, Options{Method: MethodAFXDP, NeedWakeup: wakeup, Window: 1 << 16})
			s := newLiveSender(t, true)
			sent, _ := s.send(t, p.A, withMACs(testFrame{seq: 0}.bytes(), p.B.MAC, p.A.MAC), n, 0, 1)
			rep, err = r.Stop()
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Streams) != 1 {
				t.Fatalf("streams %+v", rep.Streams)
			}
			st := rep.Streams[0]
			t.Logf("one stream from 2 CPUs: sent %d; %+v; link %+v; ring drops %d", sent, st, rep.Link, rep.RingDrops)
			var on uint64
			for _, q := range st.Queues {
				on += q.Packets
			}
			if st.Received != rep.Link.XDPPackets || rep.RingDrops != 0 || st.Duplicates != 0 || st.Received != sent || st.MaxSeq != sent ||
				st.Missing != 0 || st.Late != 0 || len(st.Queues) != 2 || on != st.Received {
				t.Errorf("stream %+v, ring drops %d, link %+v; want all %d on queues 0 and 1", st, rep.RingDrops, rep.Link, sent)
			}

			// A flood past the rings (the sender holds the readers' CPUs):
			// every frame is counted or a socket's drop, and a drop counts
			// once in the host's drops (the veth counts the failed
			// redirects in rx_dropped too).
			r = startIn(t, t.Context(), p.B, Options{Method: MethodAFXDP, NeedWakeup: wakeup})
			s = newLiveSender(t, true)
			sent, _ = s.send(t, p.A, withMACs(testFrame{seq: 0}.bytes(), p.B.MAC, p.A.MAC), 100_000, 0, 1)
			if rep, err = r.Stop(); err != nil {
				t.Fatal(err)
			}
			t.Logf("flood of %d: %d counted, ring drops %d, host drops %d, link %+v", sent, rep.TestPackets(), rep.RingDrops, rep.HostDrops(), rep.Link)
			if rep.TestPackets()+rep.RingDrops != rep.Link.XDPPackets || rep.HostDrops() != rep.RingDrops || rep.Link.XDPPackets != sent {
				t.Errorf("flood of %d: %d counted, ring drops %d, host drops %d, link %+v", sent, rep.TestPackets(), rep.RingDrops, rep.HostDrops(), rep.Link)
			}
			// A queue whose reader fell a window behind the other's counts
			// late what it reads then (in received, not first copies).
			if st := rep.Streams[0]; st.MaxSeq-st.Missing+st.Late != st.Received || st.Duplicates != 0 {
				t.Errorf("flood: stream %+v", st)
			}
		})
	}
}

// TestAFXDPBadInput: afxdp on a missing interface is ErrNoInterface; on an
// interface that already has another XDP program (neither native nor
// generic mode can then attach) Start fails naming the attach, leaves
// that program as it was and closes its sockets (a new receiver binds the
// same queue once the other program is gone); nothing of the receiver is
// left attached.
func TestAFXDPBadInput(t *testing.T) {
	p := nstest.NewPair(t, 1)
	err := p.B.NS.Do(func() error {
		_, err := Start(t.Context(), Options{Iface: "nosuch0", Method: MethodAFXDP})
		return err
	})
	if !errors.Is(err, ErrNoInterface) || !strings.Contains(err.Error(), "nosuch0") {
		t.Errorf("afxdp on a missing interface: %v, want ErrNoInterface naming it", err)
	}
	if xdpAttached(t, p.B) {
		t.Fatal("an XDP program on lrb before the test attached one")
	}

	// Another program, attached the old way (netlink, native mode).
	prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{Name: "lr_test_other", Type: ebpf.XDP, License: "Dual MIT/GPL",
		Instructions: asm.Instructions{asm.Mov.Imm(asm.R0, xdpPass), asm.Return()}})
	if err != nil {
		t.Fatal(err)
	}
	defer prog.Close()
	var theirs int
	if err := p.B.NS.Do(func() error {
		l, err := netlink.LinkByName(p.B.Name)
		if err != nil {
			return err
		}
		if err := netlink.LinkSetXdpFdWithFlags(l, prog.FD(), 1<<2); err != nil { // XDP_FLAGS_DRV_MODE
			return err
		}
		l, err = netlink.LinkByName(p.B.Name)
		if err != nil {
			return err
		}
		theirs = int(l.Attrs().Xdp.ProgId)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	err = p.B.NS.Do(func() error {
		_, err := Start(t.Context(), Options{Iface: p.B.Name, Method: MethodAFXDP, Logger: testLogger(t)})
		return err
	})
	t.Logf("afxdp over another program: %v", err)
	if err == nil || !strings.Contains(err.Error(), "afxdp: the redirect program: attach to ifindex") {
		t.Errorf("afxdp over another XDP program: %v, want the attach's refusal", err)
	}
	var now int
	if err := p.B.NS.Do(func() error {
		l, err := netlink.LinkByName(p.B.Name)
		if err != nil {
			return err
		}
		if x := l.Attrs().Xdp; x != nil {
			now = int(x.ProgId)
		}
		return netlink.LinkSetXdpFd(l, -1)
	}); err != nil {
		t.Fatal(err)
	}
	if now != theirs {
		t.Errorf("the other program (id %d) was replaced by %d", theirs, now)
	}
	// Its socket was closed: the queue binds again, and Stop detaches.
	r := startIn(t, t.Context(), p.B, Options{Method: MethodAFXDP, Window: 1 << 10})
	sendFrames(t, p.A, [][]byte{withMACs(testFrame{seq: 1}.bytes(), p.B.MAC, p.A.MAC)})
	waitFor(t, r, 1)
	if _, err := r.Stop(); err != nil {
		t.Fatal(err)
	}
	if xdpAttached(t, p.B) {
		t.Error("an XDP program is still attached to lrb after Stop")
	}
}
