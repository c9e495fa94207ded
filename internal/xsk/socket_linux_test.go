//go:build linux && traffic

package xsk

import (
	"encoding/binary"
	"strings"
	"testing"
	"time"

	"github.com/vishvananda/netlink"

	"github.com/linerate/linerate/internal/netns"
	"github.com/linerate/linerate/internal/netns/nstest"
)

// rxPackets is l's received-packet counter, read in its namespace.
func rxPackets(t *testing.T, l *netns.Link) (n uint64) {
	t.Helper()
	read := func() error {
		link, err := netlink.LinkByIndex(l.Index)
		if err == nil {
			n = link.Attrs().Statistics.RxPackets
		}
		return err
	}
	if err := l.NS.Do(read); err != nil {
		t.Fatal(err)
	}
	return n
}

// openIn opens o's socket inside l's namespace (the ifindex is the
// namespace's).
func openIn(t *testing.T, l *netns.Link, o Options) *Socket {
	t.Helper()
	o.Ifindex = l.Index
	var s *Socket
	if err := l.NS.Do(func() (err error) { s, err = Open(o); return err }); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	})
	return s
}

// sendAll sends n copies of frame from s: reserve, set, submit, kick,
// complete, as a sender does, and checks every frame came back on the
// completion ring.
func sendAll(t *testing.T, s *Socket, frame []byte, n int) {
	t.Helper()
	frames := s.Options().Frames
	for i := range frames {
		copy(s.Frame(s.FrameAddr(i)), frame)
	}
	free := make([]uint64, 0, frames)
	for i := range frames {
		free = append(free, s.FrameAddr(i))
	}
	done := make([]uint64, 64)
	sent, completed := 0, 0
	deadline := time.Now().Add(10 * time.Second)
	for completed < n {
		if time.Now().After(deadline) {
			st, _ := s.Stats()
			t.Fatalf("sent %d, completed %d of %d after 10 s; stats %+v", sent, completed, n, st)
		}
		if k := s.TxReserve(min(64, n-sent, len(free))); k > 0 {
			for i := range k {
				s.TxSet(i, free[len(free)-1-i], len(frame))
			}
			free = free[:len(free)-k]
			s.TxSubmit(k)
			sent += k
		}
		if s.NeedsWakeup(TX) {
			if _, err := s.Kick(); err != nil {
				t.Fatal(err)
			}
		}
		c := s.Complete(done)
		free = append(free, done[:c]...)
		completed += c
	}
}

// TestSocketVeth sends through a real AF_XDP socket on a veth pair, with
// and without need_wakeup, and counts the frames on the peer: veth has
// only the copy mode, auto says why, and the kernel's counters agree.
func TestSocketVeth(t *testing.T) {
	p := nstest.NewPair(t, 2)
	frame := make([]byte, 60)
	for i := range 6 {
		frame[i] = 0xff
	}
	copy(frame[6:12], p.A.MAC)
	binary.BigEndian.PutUint16(frame[12:], 0x88b5) // local experimental ethertype
	for _, tc := range []struct {
		name   string
		o      Options
		wakeup bool
	}{
		{"auto-wakeup", Options{Queue: 0, TX: true, NeedWakeup: true}, true},
		{"copy-nowakeup", Options{Queue: 1, TX: true, Mode: ModeCopy, RingSize: 256}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := openIn(t, p.A, tc.o)
			mode, why := s.Mode()
			if mode != ModeCopy {
				t.Errorf("mode on veth = %s (%s), want copy", mode, why)
			}
			if tc.o.Mode == "" && !strings.Contains(why, "refused zero-copy") {
				t.Errorf("auto's reason %q does not say the driver refused zero-copy", why)
			}
			if on, why := s.NeedWakeup(); on != tc.wakeup || s.WakeupFallback() != nil {
				t.Errorf("need_wakeup = %v (%s), fallback %v; want %v and no fallback", on, why, s.WakeupFallback(), tc.wakeup)
			}
			const n = 100_000
			before := rxPackets(t, p.B)
			sendAll(t, s, frame, n)
			// veth delivers in the sender's context; give the peer's
			// backlog a moment.
			var got uint64
			for range 50 {
				if got = rxPackets(t, p.B) - before; got >= n {
					break
				}
				time.Sleep(20 * time.Millisecond)
			}
			if got != n {
				t.Errorf("peer received %d frames, sent %d", got, n)
			}
			// Copy mode never clears the TX ring's flag: with need_wakeup
			// every batch still asks for its kick.
			if !s.NeedsWakeup(TX) {
				t.Error("copy mode: the TX ring does not ask for a wakeup")
			}
			st, err := s.Stats()
			if err != nil {
				t.Fatal(err)
			}
			if st.TxInvalid != 0 {
				t.Errorf("kernel counted %d invalid TX descriptors", st.TxInvalid)
			}
		})
	}
}

// TestSocketRefusals: a queue the interface lacks and zero-copy on a
// driver without it are refused with errors that name them.
func TestSocketRefusals(t *testing.T) {
	p := nstest.NewPair(t, 1)
	for _, tc := range []struct {
		o    Options
		want string
	}{
		{Options{Queue: 5, TX: true}, "queue 5 (copy)"},
		{Options{Queue: 0, TX: true, Mode: ModeZeroCopy}, "queue 0 (zerocopy)"},
	} {
		tc.o.Ifindex = p.A.Index
		err := p.A.NS.Do(func() error {
			s, err := Open(tc.o)
			if err == nil {
				s.Close()
			}
			return err
		})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want one naming %q", tc.o, err, tc.want)
		}
	}
}

// TestSocketRX binds an RX socket and gives it frames: with no program
// redirecting to it nothing arrives, and Poll times out.
func TestSocketRX(t *testing.T) {
	p := nstest.NewPair(t, 1)
	s := openIn(t, p.B, Options{RX: true, NeedWakeup: true, RingSize: 64})
	addrs := make([]uint64, 64)
	for i := range addrs {
		addrs[i] = s.FrameAddr(i)
	}
	if n := s.Fill(addrs); n != 64 {
		t.Fatalf("fill took %d of 64", n)
	}
	if n := s.Fill(addrs[:1]); n != 0 {
		t.Errorf("a full fill ring took %d more", n)
	}
	if err := s.Wakeup(); err != nil {
		t.Fatal(err)
	}
	ready, err := s.Poll(20 * time.Millisecond)
	if err != nil || ready {
		t.Errorf("poll = %v, %v; want a timeout", ready, err)
	}
	if n := s.Receive(make([]Desc, 8)); n != 0 {
		t.Errorf("received %d frames nobody redirected", n)
	}
}

// TestSocketReopen: a queue is free again once its socket is closed, in
// every mode and need_wakeup choice (Open binds afresh after a refused
// zero-copy attempt on the same queue).
func TestSocketReopen(t *testing.T) {
	p := nstest.NewPair(t, 1)
	for i, o := range []Options{
		{TX: true}, {TX: true}, {TX: true, NeedWakeup: true}, {TX: true, Mode: ModeCopy}, {TX: true, Mode: ModeCopy}, {RX: true, TX: true},
	} {
		o.Ifindex = p.A.Index
		start := time.Now()
		err := p.A.NS.Do(func() error {
			s, err := Open(o)
			if err != nil {
				return err
			}
			return s.Close()
		})
		t.Logf("open %d took %v", i, time.Since(start))
		if err != nil {
			t.Fatalf("open %d (%+v) on queue 0 after %d closed: %v", i, o, i, err)
		}
	}
}

// TestSocketBusy: a queue a live socket holds is refused after the wait,
// with an error that says so.
func TestSocketBusy(t *testing.T) {
	p := nstest.NewPair(t, 1)
	openIn(t, p.A, Options{TX: true, Mode: ModeCopy})
	err := p.A.NS.Do(func() error {
		s, err := Open(Options{Ifindex: p.A.Index, TX: true, Mode: ModeCopy})
		if err == nil {
			s.Close()
		}
		return err
	})
	if err == nil || !strings.Contains(err.Error(), "another AF_XDP socket holds the queue") {
		t.Errorf("second socket on a held queue: %v", err)
	}
}
