//go:build linux && traffic

package xdp

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"golang.org/x/sys/unix"

	"github.com/linerate/linerate/internal/netns/nstest"
	"github.com/linerate/linerate/pktgen"
	"github.com/linerate/linerate/pktgen/internal/engine"
	"github.com/linerate/linerate/pktgen/pktgentest"
)

func testLog(t testing.TB) hclog.Logger {
	return hclog.New(&hclog.LoggerOptions{Name: t.Name(), Level: hclog.Info, Output: testWriter{t}})
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

func newBackend(t testing.TB, s *pktgentest.Setup) *Backend {
	b := New(testLog(t))
	b.ThreadInit = s.EnterA()
	return b
}

func TestExactCountTwoThreads(t *testing.T) {
	pktgentest.SkipUnlessLiveFrames(t)
	const total = 200_003
	s := pktgentest.NewSetup(t, 2, []int{0, 1}, 110_000, func(c *pktgen.Config) {
		c.Counts = pktgen.SplitCount(total, 2)
		c.Flags = []string{"UDPCSUM"}
	})
	var samples int
	from := time.Now()
	sum, err := newBackend(t, s).Run(context.Background(), s.Cfg, func(pktgen.Progress) { samples++ })
	if err != nil {
		t.Fatal(err)
	}
	to := time.Now()
	if sum.Packets != total || sum.Backend != "xdp" || sum.Interrupted {
		t.Fatalf("summary %+v", sum)
	}
	for i, th := range sum.Threads {
		if th.Packets != s.Cfg.CountOf(i) || th.CPU != i || th.Entry != "lra@cpu"+string(rune('0'+i)) {
			t.Errorf("thread %d: %+v", i, th)
		}
	}
	s.Verify(t, sum, from, to)
	t.Logf("%d packets in %d µs: %.0f pps, %d progress samples", sum.Packets, sum.USec, sum.PPS, samples)
}

func TestNoTimestampIPv4MinFrame(t *testing.T) {
	pktgentest.SkipUnlessLiveFrames(t)
	s := pktgentest.NewSetup(t, 1, []int{1}, 5000, func(c *pktgen.Config) {
		c.Count, c.Flags, c.UDPSrcMax = 4099, []string{"NO_TIMESTAMP"}, 0
	})
	from := time.Now()
	sum, err := newBackend(t, s).Run(context.Background(), s.Cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	s.Verify(t, sum, from, time.Now())
}

// TestRunsOnCallingCPU checks that BPF_PROG_RUN runs the program on the
// CPU the thread is pinned to, so the counter moves in that CPU's slot only.
func TestRunsOnCallingCPU(t *testing.T) {
	pktgentest.SkipUnlessLiveFrames(t)
	s := pktgentest.NewSetup(t, 1, []int{1}, 1000, func(c *pktgen.Config) { c.Count = 1000 })
	r := &run{cfg: &s.Cfg, batch: DefaultBatchSize, repeat: 1000}
	defer r.close()
	var slot0, slot1 uint64
	err := engine.OnThread(s.EnterA(), func() error {
		var set unix.CPUSet
		set.Set(1)
		if err := unix.SchedSetaffinity(0, &set); err != nil {
			return err
		}
		if err := r.prepare(); err != nil {
			return err
		}
		th, err := r.open(0, 1)
		if err != nil {
			return err
		}
		t := th.(*thread)
		if err := progRun(r.prog.FD(), t.data, &t.md, 1000, r.batch); err != nil {
			return err
		}
		slot0, slot1 = r.word(0, stSeq).Load(), r.word(1, stSeq).Load()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if slot0 != 0 || slot1 != 1000 {
		t.Errorf("pinned to cpu 1: slot 0 counted %d, slot 1 %d; want 0 and 1000", slot0, slot1)
	}
}

func TestRateControl(t *testing.T) {
	pktgentest.SkipUnlessLiveFrames(t)
	const rate = 20_000
	s := pktgentest.NewSetup(t, 1, []int{0}, 40_000, func(c *pktgen.Config) {
		c.RatePPS, c.Duration = rate, time.Second
	})
	from := time.Now()
	sum, err := newBackend(t, s).Run(context.Background(), s.Cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	s.Verify(t, sum, from, time.Now())
	pktgentest.CheckRate(t, fmt.Sprintf("paced at %d pps: %d packets in %d µs", rate, sum.Packets, sum.USec), sum.PPS, float64(rate))
	t.Logf("paced at %d pps: %d packets in %d µs = %.1f pps", rate, sum.Packets, sum.USec, sum.PPS)
}

func TestDurationStop(t *testing.T) {
	pktgentest.SkipUnlessLiveFrames(t)
	// 150 ms: at up to 20 Mpps the sink's 4 Mi sequences hold it.
	s := pktgentest.NewSetup(t, 1, []int{0}, 1<<22, func(c *pktgen.Config) { c.Duration = 150 * time.Millisecond })
	from := time.Now()
	sum, err := newBackend(t, s).Run(context.Background(), s.Cfg, nil)
	took := time.Since(from)
	if err != nil {
		t.Fatal(err)
	}
	// The window is from the first to the last frame: the run's ~20 ms
	// of program setup is not in it.
	if sum.Interrupted || took < 150*time.Millisecond || sum.USec < 100_000 || sum.USec > 160_000 || took > time.Second {
		t.Errorf("150 ms run: usec %d, took %v, interrupted %v", sum.USec, took, sum.Interrupted)
	}
	s.Verify(t, sum, from, time.Now())
}

func TestCancelStops(t *testing.T) {
	pktgentest.SkipUnlessLiveFrames(t)
	// Paced at 4 Mpps a thread, so that 500 ms fit the sink's 4 Mi
	// sequences; the call is as long as the kernel takes all the same.
	s := pktgentest.NewSetup(t, 2, []int{0, 1}, 1<<22, func(c *pktgen.Config) { c.Count, c.RatePPS = 5_000_000_000, 8_000_000 })
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(500*time.Millisecond, cancel)
	from := time.Now()
	var last pktgen.Progress
	samples := 0
	sum, err := newBackend(t, s).Run(ctx, s.Cfg, func(p pktgen.Progress) { last = p; samples++ })
	took := time.Since(from)
	if err != nil {
		t.Fatal(err)
	}
	if samples < 1 || samples > 3 || last.Packets == 0 || last.Packets > sum.Packets || len(last.Threads) != 2 {
		t.Errorf("%d progress samples in 500 ms, the last %+v (sent %d in all)", samples, last, sum.Packets)
	}
	if !sum.Interrupted || took > 700*time.Millisecond {
		t.Errorf("cancelled after 500 ms: took %v, interrupted %v", took, sum.Interrupted)
	}
	s.Verify(t, sum, from, time.Now())
}

func TestProbeVethWithoutPeerProgram(t *testing.T) {
	p := nstest.NewPair(t, 1)
	b := New(testLog(t))
	b.ThreadInit = pktgentest.Enter(p.A.NS.Name)
	err := b.Probe("lra")
	if !errors.Is(err, pktgen.ErrUnsupported) || !strings.Contains(err.Error(), "peer") {
		t.Fatalf("probe of a veth whose peer has no XDP program: %v", err)
	}
	if err := b.Probe("nosuch0"); !errors.Is(err, pktgen.ErrNoDevice) {
		t.Errorf("probe of a missing interface: %v", err)
	}
}

func TestRefusesWhatItCannotSend(t *testing.T) {
	pktgentest.SkipUnlessLiveFrames(t)
	s := pktgentest.NewSetup(t, 1, []int{0}, 10, func(c *pktgen.Config) { c.Count = 10 })
	b := newBackend(t, s)
	c := s.Cfg
	c.PktSize = 4000
	if _, err := b.Run(context.Background(), c, nil); !errors.Is(err, pktgen.ErrUnsupported) || !strings.Contains(err.Error(), "3520") {
		t.Errorf("pkt_size 4000: %v", err)
	}
	c = s.Cfg
	c.CloneSkb = 5
	if _, err := b.Run(context.Background(), c, nil); !errors.Is(err, pktgen.ErrConfig) || !strings.Contains(err.Error(), "clone_skb") {
		t.Errorf("clone_skb 5: %v", err)
	}
	b.BatchSize = 512
	if _, err := b.Run(context.Background(), s.Cfg, nil); !errors.Is(err, pktgen.ErrConfig) {
		t.Errorf("batch 512: %v", err)
	}
}

// TestPacedCount checks that a paced run with a count ends when the count
// is reached (the program drops after the limit; the run is interrupted).
func TestPacedCount(t *testing.T) {
	pktgentest.SkipUnlessLiveFrames(t)
	s := pktgentest.NewSetup(t, 2, []int{0, 1}, 3000, func(c *pktgen.Config) { c.Count, c.DelayNS = 2000, 50_000 })
	from := time.Now()
	sum, err := newBackend(t, s).Run(context.Background(), s.Cfg, nil)
	took := time.Since(from)
	if err != nil {
		t.Fatal(err)
	}
	s.Verify(t, sum, from, time.Now())
	for _, th := range sum.Threads {
		if th.Packets != 2000 {
			t.Errorf("thread on cpu %d: %d packets, want 2000", th.CPU, th.Packets)
		}
		pktgentest.CheckRate(t, fmt.Sprintf("thread on cpu %d", th.CPU), th.PPS, 20_000)
	}
	if took > time.Second {
		t.Errorf("2000 packets at 20 kpps took %v", took)
	}
}

// sendStamped sends n frames from one thread on CPU 0 (edit changes
// the config), verifies them at the sink and returns the summary and the
// frames' header times in µs, in sequence order.
func sendStamped(t *testing.T, n int, edit func(*pktgen.Config)) (*pktgen.Summary, []int64) {
	pktgentest.SkipUnlessLiveFrames(t)
	t.Helper()
	s := pktgentest.NewSetup(t, 1, []int{0}, n, func(c *pktgen.Config) { c.Count = uint64(n); edit(c) })
	from := time.Now()
	sum, err := newBackend(t, s).Run(context.Background(), s.Cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	s.Verify(t, sum, from, time.Now())
	slots, err := s.Sink.Stream(0, n)
	if err != nil {
		t.Fatal(err)
	}
	ts := make([]int64, n)
	for i, sl := range slots {
		ts[i] = int64(sl.Header.TvSec)*1_000_000 + int64(sl.Header.TvUsec)
	}
	return sum, ts
}

// TestTimestampPerBulk checks the unpaced clock: the frames of each
// transmit bulk (16, the batch being 64) carry one reading, the readings
// never go back, and they advance with the run: the last bulk's is the
// first's plus the sending window.
func TestTimestampPerBulk(t *testing.T) {
	const n, bulk = 64*100 + 5, 16
	sum, ts := sendStamped(t, n, func(*pktgen.Config) {})
	for i := 1; i < n; i++ {
		if i%bulk != 0 && ts[i] != ts[i-1] {
			t.Fatalf("seq %d stamped %d µs, seq %d (same bulk) %d", i+1, ts[i], i, ts[i-1])
		}
		if ts[i] < ts[i-1] {
			t.Fatalf("seq %d stamped %d µs, before seq %d's %d", i+1, ts[i], i, ts[i-1])
		}
	}
	last := (n - 1) / bulk * bulk
	if d := ts[last] - ts[0]; d < int64(sum.USec)-2 || d > int64(sum.USec)+2 {
		t.Errorf("stamps advance %d µs from the first bulk to the last, the sending window is %d µs", d, sum.USec)
	}
}

// TestTimestampPerFramePaced checks that a paced run reads the clock for
// every frame: at 20 kpps frame i is not due before the first frame's
// time plus i × 50 µs (the schedule only ever moves later), so neither is
// its stamp (less 1 µs of truncation), which a reading shared with an
// earlier frame would be.
func TestTimestampPerFramePaced(t *testing.T) {
	const n, gap = 200, 50
	_, ts := sendStamped(t, n, func(c *pktgen.Config) { c.RatePPS = 1_000_000 / gap })
	for i := 1; i < n; i++ {
		if ts[i] < ts[0]+int64(i*gap)-1 {
			t.Fatalf("paced at %d µs: seq %d stamped %d µs after seq 1, before it was due", gap, i+1, ts[i]-ts[0])
		}
	}
}

// A run with a start instant is armed and calls the kernel early, but its
// program holds every frame until the instant: no frame is stamped
// before it (the sink checks each frame's time against the window), the
// first goes just after it, and the count is exact.
func TestStartAtGate(t *testing.T) {
	pktgentest.SkipUnlessLiveFrames(t)
	const total = 50_000
	s := pktgentest.NewSetup(t, 2, []int{0, 1}, 110_000, func(c *pktgen.Config) { c.Counts = pktgen.SplitCount(total, 2) })
	s.Cfg.StartAt = time.Now().Add(200 * time.Millisecond).Round(0)
	sum, err := newBackend(t, s).Run(context.Background(), s.Cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	to := time.Now()
	if sum.Packets != total {
		t.Fatalf("summary %+v", sum)
	}
	for i, th := range sum.Threads {
		first := time.Unix(0, int64(th.FirstFrameNs))
		if first.Before(s.Cfg.StartAt) || first.After(s.Cfg.StartAt.Add(50*time.Millisecond)) {
			t.Errorf("thread %d: first frame %s after the instant, want 0 to 50 ms", i, first.Sub(s.Cfg.StartAt))
		}
	}
	s.Verify(t, sum, s.Cfg.StartAt, to)
}
