package receiver

import "testing"

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
