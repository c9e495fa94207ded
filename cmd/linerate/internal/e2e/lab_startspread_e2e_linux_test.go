//go:build linux && traffic

package e2e

import (
	"testing"

	"github.com/linerate/linerate/coordinator"
)

// assertStartSpread checks the start measured at the traffic of a lab
// run: every stream that was sent has its first frame's time, the
// first-frame spread counts them all and is sane (p50 ≤ p99 ≤ max, under
// a second: a run's streams start within its lead, not a clock apart),
// and, the lab's hosts being namespaces of one kernel, every host reports
// one boot id and the spreads are labelled one clock. Every stream that
// arrived has its first arrival (the receiver's FirstArrivalNs), no
// earlier than its first frame was sent (less the clock conversions' error). Not a timing target: that is
// bench/start-spread.sh's.
func assertStartSpread(t *testing.T, res *coordinator.Result) {
	t.Helper()
	var sent int
	for _, f := range res.Flows {
		for _, s := range f.StreamDetail {
			if s.Sent == 0 {
				continue
			}
			sent++
			if s.FirstFrameNs == 0 {
				t.Errorf("stream %s→%s:%d: sent %d, no first-frame time", s.Src, s.Dst, s.DstPort, s.Sent)
			} else if first := res.Started.UnixNano(); int64(s.FirstFrameNs) < first || s.FirstFrameNs > uint64(res.Finished.UnixNano()) {
				t.Errorf("stream %s→%s:%d: first frame %d outside the run (%s … %s)", s.Src, s.Dst, s.DstPort, s.FirstFrameNs, res.Started, res.Finished)
			}
		}
	}
	boot := ""
	for _, h := range res.Hosts {
		if h.Clock == nil || h.Clock.BootID == "" || h.Clock.Error != "" {
			t.Errorf("host %s: clock %+v, want one read with a boot id", h.Name, h.Clock)
			continue
		}
		if boot == "" {
			boot = h.Clock.BootID
		} else if h.Clock.BootID != boot {
			t.Errorf("host %s: boot id %s, want the lab's one kernel's %s", h.Name, h.Clock.BootID, boot)
		}
	}
	sp := res.StartSpread
	if sp == nil || sp.FirstFrame == nil || sp.FirstArrival == nil {
		t.Fatalf("start spread %+v: want both sides", sp)
	}
	sane := func(what string, s *coordinator.Spread) {
		if s.Clocks != coordinator.ClocksOne {
			t.Errorf("%s: clocks %q, want %q (one kernel)", what, s.Clocks, coordinator.ClocksOne)
		}
		if s.Streams > 0 && (s.P50US < 0 || s.P50US > s.P99US || s.P99US > s.MaxUS || s.MaxUS > 1e6) {
			t.Errorf("%s: p50 %v p99 %v max %v µs: not ordered, or more than a second", what, s.P50US, s.P99US, s.MaxUS)
		}
	}
	ff, fa := sp.FirstFrame, sp.FirstArrival
	if ff.Streams != sent || ff.Missing != 0 {
		t.Errorf("first frame: %d streams (%d missing), want all %d sent", ff.Streams, ff.Missing, sent)
	}
	sane("first frame", ff)
	if fa.Streams != sent || fa.Missing != 0 {
		t.Errorf("first arrival: %d streams (%d missing), want all %d sent", fa.Streams, fa.Missing, sent)
	}
	for _, f := range res.Flows {
		for _, s := range f.StreamDetail {
			// Both ends move CLOCK_MONOTONIC readings onto the wall
			// clock, each with its own offset: 100 µs for the two.
			if s.Received > 0 && s.FirstArrivalNs+100_000 < s.FirstFrameNs {
				t.Errorf("stream %s→%s:%d: first arrival %d before its first frame %d (one clock)", s.Src, s.Dst, s.DstPort, s.FirstArrivalNs, s.FirstFrameNs)
			}
		}
	}
	sane("first arrival", fa)
	t.Logf("start spread: first frame p50 %.0f p99 %.0f max %.0f µs over %d streams; first arrival p50 %.0f p99 %.0f max %.0f µs over %d",
		ff.P50US, ff.P99US, ff.MaxUS, ff.Streams, fa.P50US, fa.P99US, fa.MaxUS, fa.Streams)
}
