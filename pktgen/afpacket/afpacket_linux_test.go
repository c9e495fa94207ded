//go:build linux && traffic

package afpacket

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/linerate/linerate/pktgen"
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
	const total = 100_001
	s := pktgentest.NewSetup(t, 2, []int{0, 1}, 60_000, func(c *pktgen.Config) {
		c.Counts = pktgen.SplitCount(total, 2)
		c.Flags = []string{"UDPCSUM"}
	})
	from := time.Now()
	sum, err := newBackend(t, s).Run(context.Background(), s.Cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	to := time.Now()
	if sum.Packets != total || sum.Backend != "afpacket" || sum.Interrupted {
		t.Fatalf("summary %+v", sum)
	}
	for i, th := range sum.Threads {
		if th.Packets != s.Cfg.CountOf(i) || th.CPU != i || th.Entry != "lra@cpu"+string(rune('0'+i)) {
			t.Errorf("thread %d: %+v", i, th)
		}
	}
	s.Verify(t, sum, from, to)
	t.Logf("%d packets in %d µs: %.0f pps", sum.Packets, sum.USec, sum.PPS)
}

func TestNoTimestampVLANBigFrame(t *testing.T) {
	s := pktgentest.NewSetup(t, 1, []int{1}, 5000, func(c *pktgen.Config) {
		c.Count, c.Flags, c.PktSize, c.UDPSrcMax = 3001, []string{"NO_TIMESTAMP", "UDPCSUM"}, 1000, 0
	})
	from := time.Now()
	b := newBackend(t, s)
	b.Batch = 7
	sum, err := b.Run(context.Background(), s.Cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	s.Verify(t, sum, from, time.Now())
}

func TestRateControl(t *testing.T) {
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

func TestDelayAcrossThreads(t *testing.T) {
	// 5 kpps per thread as pktgen's delay (200 µs: the sleeping path),
	// two threads, 2500 packets each.
	s := pktgentest.NewSetup(t, 2, []int{0, 1}, 6000, func(c *pktgen.Config) {
		c.DelayNS, c.Count = 200_000, 2500
	})
	from := time.Now()
	sum, err := newBackend(t, s).Run(context.Background(), s.Cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	s.Verify(t, sum, from, time.Now())
	for _, th := range sum.Threads {
		pktgentest.CheckRate(t, fmt.Sprintf("thread on cpu %d", th.CPU), th.PPS, 5000)
	}
}

func TestDurationStop(t *testing.T) {
	s := pktgentest.NewSetup(t, 1, []int{0}, 1<<20, func(c *pktgen.Config) { c.Duration = 300 * time.Millisecond })
	from := time.Now()
	sum, err := newBackend(t, s).Run(context.Background(), s.Cfg, nil)
	took := time.Since(from)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Interrupted || sum.USec < 295_000 || sum.USec > 350_000 || took > 1500*time.Millisecond {
		t.Errorf("300 ms run: usec %d, took %v, interrupted %v", sum.USec, took, sum.Interrupted)
	}
	s.Verify(t, sum, from, time.Now())
}

func TestCancelStops(t *testing.T) {
	s := pktgentest.NewSetup(t, 2, []int{0, 1}, 1<<20, func(c *pktgen.Config) { c.Count = 5_000_000_000 })
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
	if !sum.Interrupted || took > time.Second {
		t.Errorf("cancelled after 500 ms: took %v, interrupted %v", took, sum.Interrupted)
	}
	if samples < 1 || samples > 3 || last.Packets == 0 || last.Packets > sum.Packets {
		t.Errorf("%d progress samples in 500 ms, the last %+v (sent %d in all)", samples, last, sum.Packets)
	}
	s.Verify(t, sum, from, time.Now())
}
