//go:build linux

package pktgentest

import (
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/linerate/linerate/internal/netns/nstest"
	"github.com/linerate/linerate/pktgen"
)

// Setup is a generator test bed: namespaces A and B joined by a veth, a
// Sink on B's end, and a Config that sends from A's end to B, one
// stream per thread (source 198.18.0.1+i).
type Setup struct {
	Pair   *nstest.Pair
	Sink   *Sink
	Cfg    pktgen.Config
	Frames []*pktgen.Frame
}

// NewSetup makes the test bed with queues per veth end and one thread
// per CPU in cpus; edit changes the config before the frames are built
// (nil: 60-byte frames, UDP source ports 1000-1006). maxSeq bounds the
// sequences the sink records per stream.
//
// Test beds are exclusive across test binaries (a lock file): the
// generator tests pin threads to CPUs and measure rates, and go test runs
// packages in parallel.
func NewSetup(t testing.TB, queues int, cpus []int, maxSeq int, edit func(*pktgen.Config)) *Setup {
	t.Helper()
	nstest.SkipUnlessRoot(t)
	lockCPUs(t)
	p := nstest.NewPair(t, queues)
	s := &Setup{Pair: p, Cfg: pktgen.Config{
		Device: p.A.Name, CPUs: cpus, PktSize: 60, DstMin: p.B.Addr.Addr(), SrcMin: p.A.Addr.Addr(), SrcPerThread: true,
		DstMAC: p.B.MAC, UDPSrcMin: 1000, UDPSrcMax: 1006, UDPDstMin: 9,
	}}
	if edit != nil {
		edit(&s.Cfg)
	}
	for i := range cpus {
		f, err := pktgen.BuildFrame(&s.Cfg, i, p.A.MAC)
		if err != nil {
			t.Fatal(err)
		}
		s.Frames = append(s.Frames, f)
	}
	err := p.B.NS.Do(func() error {
		var err error
		s.Sink, err = Attach(p.B.Index, LayoutOf(s.Frames[0], len(cpus), maxSeq))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Sink.Close(); err != nil {
			t.Error(err)
		}
	})
	return s
}

// lockCPUs holds an exclusive lock file until the test ends.
func lockCPUs(t testing.TB) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(os.TempDir(), "linerate-pktgentest.lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		t.Fatalf("open the test bed lock: %v", err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		f.Close()
		t.Fatalf("lock the test bed: %v", err)
	}
	t.Cleanup(func() { f.Close() }) // closing releases the lock, after the bed's own cleanups
}

// EnterA is a ThreadInit that enters namespace A.
func (s *Setup) EnterA() func() error { return Enter(s.Pair.A.NS.Name) }

// Verify checks a run's summary against what the sink saw: every
// thread's stream complete (1..its packets, once each, headers, ports,
// times and checksums right), distinct sources, and nothing else.
func (s *Setup) Verify(t testing.TB, sum *pktgen.Summary, from, to time.Time) {
	t.Helper()
	if len(sum.Threads) != len(s.Cfg.CPUs) {
		t.Fatalf("%d threads in the summary, want %d", len(sum.Threads), len(s.Cfg.CPUs))
	}
	var srcs []string
	for i, th := range sum.Threads {
		if want := s.Cfg.ThreadSource(i).String(); th.Src != want {
			t.Errorf("thread %d src %q, want %q", i, th.Src, want)
		}
		if src, _ := netip.ParseAddr(th.Src); slices.Contains(srcs, src.String()) {
			t.Errorf("thread %d shares source %s", i, th.Src)
		}
		srcs = append(srcs, th.Src)
		if th.Errors != 0 {
			t.Errorf("thread %d: %d errors", i, th.Errors)
		}
	}
	st, err := s.Sink.WaitFor(sum.Packets, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if st.Test != sum.Packets || st.Bad != 0 {
		t.Errorf("sink counted %d test frames (%d bad, %d other), the summary says %d sent", st.Test, st.Bad, st.Other, sum.Packets)
	}
	for i, th := range sum.Threads {
		probs, err := s.Sink.Check(i, th.Packets, s.Frames[i], from, to)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range probs {
			t.Error(p)
		}
	}
}
