package report

import (
	"strings"
	"testing"

	"github.com/linerate/linerate/coordinator"
)

// The run table names both start spreads with their percentiles, the
// streams without a time and what the clocks are worth.
func TestRunTableStartSpread(t *testing.T) {
	res := &coordinator.Result{RunID: "r", Status: coordinator.StatusOK, FrameSize: 64, Pattern: "pairs", StartSkewUS: 900,
		StartSpread: &coordinator.StartSpread{
			FirstFrame:   &coordinator.Spread{Streams: 4, P50US: 12, P99US: 80, MaxUS: 80, Clocks: coordinator.ClocksOne},
			FirstArrival: &coordinator.Spread{Streams: 3, Missing: 1, P50US: 20, P99US: 95, MaxUS: 95, Clocks: coordinator.ClocksSynced, ClockErrorUS: 250},
		}}
	var b strings.Builder
	if err := RunTable(&b, res); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"agents' start skew 900 µs",
		"start spread of first frames: p50 12 µs, p99 80 µs, max 80 µs over 4 streams; one clock\n",
		"start spread of first arrivals: p50 20 µs, p99 95 µs, max 95 µs over 3 streams (1 without a time); synchronised clocks, each within ±250 µs\n",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("run table lacks %q:\n%s", want, b.String())
		}
	}
	res.StartSpread = nil
	b.Reset()
	_ = RunTable(&b, res)
	if strings.Contains(b.String(), "start spread") {
		t.Errorf("a run without first-frame times shows a spread:\n%s", b.String())
	}
}
