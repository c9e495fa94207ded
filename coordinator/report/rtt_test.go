package report

import (
	"strings"
	"testing"

	"github.com/linerate/linerate/coordinator"
	"github.com/linerate/linerate/latency"
)

// The run table gives each flow's round trips: the latency stream's
// books both ways, the round trips' min, p50, p99 and max on the
// sender's clock, and the lowest per second's median and least; a flow
// without round trips has no row, and a run that timed nothing says so
// rather than showing zeros.
func TestRunTableRTT(t *testing.T) {
	var r latency.Recorder
	for _, d := range []int64{40, 50, 60, 900} {
		r.Record(d)
	}
	res := &coordinator.Result{RunID: "r", Status: coordinator.StatusOK, FrameSize: 64, Latency: coordinator.LatencyRTT, Flows: []coordinator.Flow{
		{Sender: "s1", Receiver: "r1", RTT: &coordinator.RTT{Port: 10002, Sent: 5, Received: 5, Reflected: 5, Returned: 4, LostBack: 1,
			Latency: &latency.Latency{Histogram: r.H, Clock: latency.SameHost}, Lowest: latency.NewLowest([]uint64{50, 40, 60})}},
		{Sender: "s2", Receiver: "r1"},
	}}
	var b strings.Builder
	if err := RunTable(&b, res); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if !strings.Contains(out, "RTT (µs)  SENT  RECEIVED  REFLECTED  RETURNED  LOST OUT  LOST BACK  MIN  P50  P99  MAX  LOWEST/S MEDIAN  LOWEST/S MIN      CLOCK") ||
		!strings.Contains(out, "s1→r1     5         5          5         4         0          1   40   50  900  900               50            40  same-host") ||
		strings.Contains(out[strings.Index(out, "RTT (µs)"):], "s2→r1") || strings.Contains(out, "latency: off") {
		t.Errorf("run table:\n%s", out)
	}
	res.Latency, res.Flows = coordinator.LatencyOff, []coordinator.Flow{{Sender: "s1", Receiver: "r1"}}
	b.Reset()
	_ = RunTable(&b, res)
	if out := b.String(); !strings.Contains(out, "latency: off (--latency off): nothing timed") || strings.Contains(out, "RTT (µs)") || strings.Contains(out, "LATENCY (µs)") {
		t.Errorf("latency off:\n%s", out)
	}
}
