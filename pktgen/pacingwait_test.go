package pktgen

import (
	"strings"
	"testing"
)

// A paced device's wait is its Result's idle time, at most one gap per
// packet; an unpaced one, or one without a result, waited for nothing.
func TestPacingWaitUSec(t *testing.T) {
	file := func(delayNS, packets, idleUS string) string {
		return "Params: count " + packets + "  min_pkt_size: 60  max_pkt_size: 60\n" +
			"     frags: 0  delay: " + delayNS + "  clone_skb: 0  ifname: eth0@0\n" +
			"Current:\n     pkts-sofar: " + packets + "  errors: 0\n" +
			"     started: 1000us  stopped: 2001000us idle: " + idleUS + "us\n" +
			"Result: OK: 2000000(c300000+d" + idleUS + ") usec, " + packets + " (60byte,0frags)\n" +
			"  5000pps 2Mb/sec (2400000bps) errors: 0\n"
	}
	for _, tc := range []struct {
		name                 string
		delay, packets, idle string
		want                 uint64
	}{
		{"paced: the idle time", "200000", "10000", "1700000", 1700000},
		{"a yield past one gap a packet: capped", "200000", "10000", "2500000", 2000000},
		{"unpaced", "0", "10000", "1254", 0},
	} {
		df, err := ParseDeviceFile("eth0@0", strings.NewReader(file(tc.delay, tc.packets, tc.idle)))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := df.PacingWaitUSec(); got != tc.want {
			t.Errorf("%s: PacingWaitUSec %d, want %d", tc.name, got, tc.want)
		}
	}
	df, err := ParseDeviceFile("eth0@0", strings.NewReader("Params: count 10  delay: 200000\nCurrent:\n     pkts-sofar: 3  errors: 0\nResult: Idle\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := df.PacingWaitUSec(); got != 0 {
		t.Errorf("no result yet: PacingWaitUSec %d, want 0", got)
	}
}
