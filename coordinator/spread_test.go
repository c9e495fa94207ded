package coordinator

import (
	"strings"
	"testing"
	"time"

	recv "github.com/linerate/linerate/receiver"
)

// Streams of two senders to two receivers: the first-frame spread is of
// each stream's offset from the earliest first frame, the first-arrival
// spread likewise on the receivers' clocks; a stream sent without a time
// counts as missing.
func TestStartSpreadOf(t *testing.T) {
	const t0 = 1_764_650_000_000_000_000
	flows := []Flow{
		{Sender: "s1", Receiver: "r1", StreamDetail: []Stream{
			{Sent: 10, FirstFrameNs: t0, StreamReport: recv.StreamReport{FirstArrivalNs: t0 + 50_000}},
			{Sent: 10, FirstFrameNs: t0 + 100_000, StreamReport: recv.StreamReport{FirstArrivalNs: t0 + 120_000}},
		}},
		{Sender: "s2", Receiver: "r2", StreamDetail: []Stream{
			{Sent: 10, FirstFrameNs: t0 + 40_000, StreamReport: recv.StreamReport{FirstArrivalNs: t0 + 90_000}},
			{Sent: 10}, // no times: missing on both sides
		}},
	}
	one := func(boot string) *Clock { return &Clock{BootID: boot} }
	sp := startSpreadOf(flows, map[string]*Clock{"s1": one("b"), "s2": one("b"), "r1": one("b"), "r2": one("b")}, nil)
	ff, fa := sp.FirstFrame, sp.FirstArrival
	if ff.Streams != 3 || ff.Missing != 1 || ff.P50US != 40 || ff.P99US != 100 || ff.MaxUS != 100 {
		t.Errorf("first frame: %+v, want 3 streams (1 missing), p50 40, p99 100, max 100 µs", ff)
	}
	if fa.Streams != 3 || fa.P50US != 40 || fa.MaxUS != 70 || strings.Join(fa.Hosts, ",") != "r1,r2" {
		t.Errorf("first arrival: %+v, want p50 40, max 70 µs over r1, r2", fa)
	}
	if ff.Clocks != ClocksOne || fa.Clocks != ClocksOne {
		t.Errorf("one boot id: clocks %q / %q, want %q", ff.Clocks, fa.Clocks, ClocksOne)
	}
	if sp := startSpreadOf(nil, nil, nil); sp != nil {
		t.Errorf("no streams: %+v, want none", sp)
	}

	// Four hosts on four clocks seconds apart, each measured: the times
	// are corrected by the offsets, and the label says so with the bound.
	skewed := []Flow{
		{Sender: "s1", Receiver: "r1", StreamDetail: []Stream{{Sent: 10, FirstFrameNs: t0 + 3e9, StreamReport: recv.StreamReport{FirstArrivalNs: t0 - 2e9 + 50_000}}}},
		{Sender: "s2", Receiver: "r2", StreamDetail: []Stream{{Sent: 10, FirstFrameNs: t0 + 40_000, StreamReport: recv.StreamReport{FirstArrivalNs: t0 + 7e9 + 90_000}}}},
	}
	off := func(d time.Duration, rtt time.Duration) *Offset { return &Offset{Offset: d, RTT: rtt} }
	offsets := map[string][2]*Offset{
		"s1": {off(3*time.Second, 100*time.Microsecond), off(3*time.Second+10*time.Microsecond, 0)},
		"s2": {off(0, 60*time.Microsecond), nil},
		"r1": {off(-2*time.Second, 40*time.Microsecond), nil},
		"r2": {off(7*time.Second, 40*time.Microsecond), nil},
	}
	clocks := map[string]*Clock{"s1": one("k1"), "s2": one("k2"), "r1": one("k3"), "r2": one("k4")}
	sp = startSpreadOf(skewed, clocks, offsets)
	if ff := sp.FirstFrame; ff.MaxUS != 40 || ff.Clocks != ClocksEstimated || ff.ClockErrorUS != 2*(50+10) {
		t.Errorf("first frames on measured clocks: %+v, want max 40 µs, %q ±120 µs", ff, ClocksEstimated)
	}
	if fa := sp.FirstArrival; fa.MaxUS != 40 || fa.Clocks != ClocksEstimated || fa.ClockErrorUS != 40 {
		t.Errorf("first arrivals on measured clocks: %+v, want max 40 µs, %q ±40 µs", fa, ClocksEstimated)
	}
	delete(offsets, "r2")
	if fa := startSpreadOf(skewed, clocks, offsets).FirstArrival; fa.Clocks != ClocksUnsynced || fa.MaxUS < 9e6 {
		t.Errorf("a receiver not measured: %+v, want %q, uncorrected", fa, ClocksUnsynced)
	}
}

// The label of a spread over several hosts: one boot id is one clock;
// every clock synchronised is "synchronised clocks" with the worst
// estimated error; any host unsynchronised, unreadable or unknown makes
// it "unsynchronised clocks". One host is always one clock.
func TestClocksOf(t *testing.T) {
	synced := func(boot string, est int64) *Clock {
		return &Clock{Synchronised: true, EstErrorUS: est, BootID: boot}
	}
	for _, tt := range []struct {
		name   string
		hosts  []string
		clocks map[string]*Clock
		want   string
		errUS  int64
	}{
		{"one host", []string{"a"}, nil, ClocksOne, 0},
		{"one kernel, unsynchronised", []string{"a", "b"}, map[string]*Clock{"a": {BootID: "k"}, "b": {BootID: "k"}}, ClocksOne, 0},
		{"two kernels, both synchronised", []string{"a", "b"}, map[string]*Clock{"a": synced("k1", 30), "b": synced("k2", 120)}, ClocksSynced, 120},
		{"two kernels, one unsynchronised", []string{"a", "b"}, map[string]*Clock{"a": synced("k1", 30), "b": {BootID: "k2"}}, ClocksUnsynced, 0},
		{"a clock not reported", []string{"a", "b"}, map[string]*Clock{"a": synced("k1", 30)}, ClocksUnsynced, 0},
		{"a clock unreadable, one kernel", []string{"a", "b"}, map[string]*Clock{"a": synced("k", 30), "b": {BootID: "k", Error: "adjtimex: EPERM"}}, ClocksOne, 0},
		{"a clock unreadable, two kernels", []string{"a", "b"}, map[string]*Clock{"a": synced("k1", 30), "b": {BootID: "k2", Error: "adjtimex: EPERM"}}, ClocksUnsynced, 0},
		{"no boot ids, synchronised", []string{"a", "b"}, map[string]*Clock{"a": synced("", 5), "b": synced("", 7)}, ClocksSynced, 7},
	} {
		got, errUS := clocksOf(tt.hosts, tt.clocks)
		if got != tt.want || errUS != tt.errUS {
			t.Errorf("%s: %q ±%d µs, want %q ±%d µs", tt.name, got, errUS, tt.want, tt.errUS)
		}
	}
}
