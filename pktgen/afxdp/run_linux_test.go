//go:build linux && traffic

package afxdp

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vishvananda/netlink"

	"github.com/linerate/linerate/pktgen"
	"github.com/linerate/linerate/pktgen/pktgentest"
)

// TestExactCounts sends exact counts with one and two threads (one
// socket per queue), unpaced and paced, of 64- and 1518-byte frames
// (60 and 1514 without the FCS), and the sink checks every frame of
// every stream. On veth the summary says copy mode, and need_wakeup off
// (auto) because veth is a virtual device.
func TestExactCounts(t *testing.T) {
	type send struct {
		threads, size int    // threads (CPUs 0 and 1, queues 0 and 1) and pkt_size
		rate, total   uint64 // pps in all (0: unpaced) and packets in all
	}
	for _, tc := range []send{
		{1, 60, 0, 200_001},
		{2, 60, 0, 200_001},
		{1, 1514, 0, 50_001},
		{2, 1514, 0, 50_001},
		{1, 60, 20_000, 10_000},
		{2, 1514, 20_000, 10_001},
	} {
		t.Run(strconv.Itoa(tc.threads)+"threads-"+strconv.Itoa(tc.size+4)+"B-"+strconv.FormatUint(tc.rate, 10)+"pps", func(t *testing.T) {
			cpus := []int{0, 1}[:tc.threads]
			s := pktgentest.NewSetup(t, 2, cpus, int(tc.total)+10, func(c *pktgen.Config) {
				c.Counts = pktgen.SplitCount(tc.total, tc.threads)
				c.PktSize = tc.size
				c.Flags = []string{"UDPCSUM"}
				if tc.rate > 0 {
					c.Rates = pktgen.SplitRate(tc.rate, tc.threads)
				}
			})
			from := time.Now()
			sum, err := newBackend(t, s).Run(context.Background(), s.Cfg, nil)
			if err != nil {
				t.Fatal(err)
			}
			to := time.Now()
			if sum.Packets != tc.total || sum.Backend != "afxdp" || sum.Interrupted {
				t.Fatalf("summary %+v", sum)
			}
			for i, th := range sum.Threads {
				if th.Packets != s.Cfg.CountOf(i) || th.Queue == nil || *th.Queue != i {
					t.Errorf("thread %d: %+v, want %d packets on queue %d", i, th, s.Cfg.CountOf(i), i)
				}
			}
			s.Verify(t, sum, from, to)
			hasNote(t, sum, "copy mode", "refused zero-copy")
			hasNote(t, sum, "need_wakeup off (auto)", "veth is a virtual device")
			if len(sum.Warnings) > 0 {
				t.Errorf("warnings: %q", sum.Warnings)
			}
			if tc.rate > 0 {
				pktgentest.CheckRate(t, "paced at "+strconv.FormatUint(tc.rate, 10)+" pps", sum.PPS, float64(tc.rate))
			}
			t.Logf("%d packets in %d µs: %.0f pps; notes %q", sum.Packets, sum.USec, sum.PPS, sum.Notes)
		})
	}
}

// TestNeedWakeupForced: on binds every socket with XDP_USE_NEED_WAKEUP
// on veth too, off without it, and both stay exact.
func TestNeedWakeupForced(t *testing.T) {
	for _, tc := range []struct {
		policy pktgen.NeedWakeup
		note   string
	}{
		{pktgen.NeedWakeupOn, "need_wakeup on: asked for; bound with XDP_USE_NEED_WAKEUP"},
		{pktgen.NeedWakeupOff, "need_wakeup off: asked for"},
	} {
		t.Run(string(tc.policy), func(t *testing.T) {
			s := pktgentest.NewSetup(t, 2, []int{0, 1}, 60_000, func(c *pktgen.Config) {
				c.Counts, c.NeedWakeup = pktgen.SplitCount(100_000, 2), tc.policy
			})
			from := time.Now()
			sum, err := newBackend(t, s).Run(context.Background(), s.Cfg, nil)
			if err != nil {
				t.Fatal(err)
			}
			s.Verify(t, sum, from, time.Now())
			hasNote(t, sum, tc.note)
		})
	}
}

func TestDuration(t *testing.T) {
	s := pktgentest.NewSetup(t, 2, []int{0, 1}, 1<<22, func(c *pktgen.Config) { c.Duration = 300 * time.Millisecond })
	from := time.Now()
	sum, err := newBackend(t, s).Run(context.Background(), s.Cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Interrupted || sum.USec < 295_000 || sum.USec > 400_000 {
		t.Errorf("300 ms run: usec %d, interrupted %v", sum.USec, sum.Interrupted)
	}
	s.Verify(t, sum, from, time.Now())
}

func TestCancel(t *testing.T) {
	s := pktgentest.NewSetup(t, 2, []int{0, 1}, 1<<22, func(c *pktgen.Config) { c.Count = 5_000_000_000 })
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	from := time.Now()
	sum, err := newBackend(t, s).Run(ctx, s.Cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !sum.Interrupted || time.Since(from) > 1500*time.Millisecond {
		t.Errorf("cancelled after 300 ms: took %v, interrupted %v", time.Since(from), sum.Interrupted)
	}
	s.Verify(t, sum, from, time.Now())
}

// Per-thread rates (a flow's rate split over its threads): each thread
// paced at its own, together the flow's.
func TestPerThreadRates(t *testing.T) {
	pktgentest.CheckPerThreadRates(t, func(s *pktgentest.Setup) pktgen.Backend { return newBackend(t, s) })
}

// TestDroppedByDriver: a frame the driver drops after the kernel took it
// (copy mode's NET_XMIT_DROP) counts as a packet sent, not an error, and
// the summary warns of it; the known truth is the device's own
// tx_dropped. A's veth end has no carrier once B's end is down, so the
// kernel's direct transmit drops every frame: the count is still met, on
// each of two sockets (queues 0 and 1).
func TestDroppedByDriver(t *testing.T) {
	const count = 3000
	s := pktgentest.NewSetup(t, 2, []int{0, 1}, 10, func(c *pktgen.Config) { c.Counts = pktgen.SplitCount(count, 2) })
	txDropped := func() uint64 {
		var n uint64
		if err := s.Pair.A.NS.Do(func() error {
			l, err := netlink.LinkByIndex(s.Pair.A.Index)
			if err != nil {
				return err
			}
			n = l.Attrs().Statistics.TxDropped
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if err := s.Pair.B.NS.Do(func() error {
		l, err := netlink.LinkByIndex(s.Pair.B.Index)
		if err != nil {
			return err
		}
		return netlink.LinkSetDown(l)
	}); err != nil {
		t.Fatal(err)
	}
	before := txDropped()
	sum, err := newBackend(t, s).Run(context.Background(), s.Cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	dropped := txDropped() - before
	if sum.Packets != count || sum.Errors != 0 {
		t.Errorf("summary: %d packets, %d errors: want %d sent, no errors", sum.Packets, sum.Errors, count)
	}
	for i, th := range sum.Threads {
		if th.Packets != s.Cfg.CountOf(i) || th.Errors != 0 {
			t.Errorf("thread %d: %+v: want %d sent, no errors", i, th, s.Cfg.CountOf(i))
		}
	}
	if dropped != count {
		t.Errorf("the device's tx_dropped grew by %d, want every one of %d frames", dropped, count)
	}
	if len(sum.Warnings) != 1 || !strings.Contains(sum.Warnings[0], fmt.Sprintf("dropped %d frames", count)) {
		t.Errorf("warnings %q: want one saying the driver dropped %d frames", sum.Warnings, count)
	}
	if st, err := s.Sink.Stats(); err != nil || st.Test+st.Bad != 0 {
		t.Errorf("the sink saw %+v (%v) through a link that is down", st, err)
	}
}
