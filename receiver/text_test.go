package receiver

import (
	"strings"
	"testing"

	"github.com/linerate/linerate/latency"
)

func TestRangesText(t *testing.T) {
	for _, tt := range []struct {
		s    StreamReport
		want string
	}{
		{StreamReport{}, "-"},
		{StreamReport{Missing: 3, MissingRanges: [][2]uint64{{4, 5}, {9, 9}}}, "4-5,9"},
		{StreamReport{Missing: 10, MissingRanges: [][2]uint64{{4, 5}}}, "4-5,..."},
		{StreamReport{Missing: 10, MissingRanges: [][2]uint64{{40, 45}}, MissingRangesFrom: 30}, "...,40-45"},
		{StreamReport{Missing: 10}, "..."},
	} {
		if got := tt.s.RangesText(); got != tt.want {
			t.Errorf("RangesText(%+v) = %q, want %q", tt.s, got, tt.want)
		}
	}
}

// A receiving host's drops are its rings', rx_dropped, rx_missed and
// rx_fifo; the XDP program's own drops are not the host's.
func TestReportHostDrops(t *testing.T) {
	r := Report{RingDrops: 1, Link: LinkCounters{RxPackets: 50, RxDropped: 2, RxMissed: 3, RxFifo: 4, XDPPackets: 50, XDPDrops: 100}}
	if got := r.HostDrops(); got != 10 {
		t.Errorf("host drops %d, want 10", got)
	}
}

// The table gives each stream's delays and the clock they are on, and
// warns when delays were negative or absurd (the clocks disagree).
func TestWriteTableLatency(t *testing.T) {
	var rec latency.Recorder
	for _, d := range []int64{100, 200, 300, -5} {
		rec.Record(d)
	}
	r := Report{Method: MethodXDP, Streams: []StreamReport{{Src: addrA, Dst: addrB, DstPort: 9, Received: 4, MaxSeq: 4,
		Latency: &latency.Latency{Histogram: rec.H, Clock: latency.Estimated, ClockErrorUs: 40}}}}
	var b strings.Builder
	if err := r.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"latency  one-way, µs, on the estimated clock (±40 µs)",
		"MIN  P50  P99  MAX  JITTER",
		"100  202  300  300  30.4",
		"warning: 198.18.0.1 -> 198.18.0.2:9: 1 packets arrived before their send time: the sender's clock and this host's disagree (--clock estimated)",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table without %q:\n%s", want, b.String())
		}
	}
	r.Streams[0].Latency = nil
	b.Reset()
	_ = r.WriteTable(&b)
	if strings.Contains(b.String(), "latency") || strings.Contains(b.String(), "P50") {
		t.Errorf("latency off, yet:\n%s", b.String())
	}
}
