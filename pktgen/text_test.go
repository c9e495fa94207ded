package pktgen

import (
	"strings"
	"testing"
)

// A summary renders its totals, a row per stream (its queue, or - when
// it had none) and its warnings.
func TestSummaryWriteTable(t *testing.T) {
	q := 1
	s := &Summary{Backend: "kernel", Device: "eth0", USec: 2_000_000, Warnings: []string{"burst refused"}, Interrupted: true,
		Threads: []ThreadSummary{
			{CPU: 2, Entry: "eth0@2", Src: "198.18.0.1", Packets: 1000, USec: 2_000_000, PPS: 500},
			{CPU: 3, Entry: "eth0@3q1", Queue: &q, Src: "198.18.0.2", Packets: 1000, Errors: 1, USec: 2_000_000, PPS: 500},
		}}
	s.Finish(60)
	var b strings.Builder
	if err := s.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	want := `kernel backend, eth0, 2 threads: sent 2000 packets, 1 errors in 2.000 s
1000 pps, L2 0.512 Mb/s, L1 0.672 Mb/s (frames of 60 bytes + FCS)
CPU  QUEUE  ENTRY     SRC         PACKETS  ERRORS  USEC     PPS  
2    -      eth0@2    198.18.0.1  1000     0       2000000  500  
3    1      eth0@3q1  198.18.0.2  1000     1       2000000  500  
warning: burst refused
interrupted: pktgen was stopped early
`
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}
