package campaign

import (
	"math"
	"testing"
)

// A shaped campaign, as `lab campaign --shape 50mbit`: the hosts
// announce 10 G links, the path carries 50 Mbit/s. Every figure of the
// document is of the shaper's line rate (report's
// TestReportOneLineRate renders such a document).
func TestCampaignOneLineRatePerSize(t *testing.T) {
	shaper := func(frame float64) (float64, string) { return 50e6 / 8 / (frame - 4), "a 50 Mbit/s shaper" }
	limit := func(size int) float64 { v, _ := shaper(float64(size)); return 0.98 * v }
	spec := `agents: {senders: [s1, s2], receivers: [r2]}
pattern: fan-in
frame_sizes: [64, 1518]
trial_duration: 100ms
between_trials: {pause: 1ms}
search: {type: rfc2544, resolution: 0.5%}
`
	doc, _ := runCampaign(t, &dut{limit: limit}, spec, shaper)
	if len(doc.Summary) != 2 {
		t.Fatalf("%d summary rows, want 2", len(doc.Summary))
	}
	for _, s := range doc.Summary {
		perFlow, _ := shaper(float64(s.Size))
		if !near(s.LinePPS, 2*perFlow) || s.LineBasis != "a 50 Mbit/s shaper" {
			t.Errorf("size %d: line %v pps (%q), want 2 flows × %v (the shaper)", s.Size, s.LinePPS, s.LineBasis, perFlow)
		}
		if s.LineRatePct < 97 || s.LineRatePct > 99 || !near(s.LineRatePct, 100*s.ThroughputPPS/s.LinePPS) {
			t.Errorf("size %d: %.2f %% of line rate, want about 98 %% = throughput / line_pps", s.Size, s.LineRatePct)
		}
	}
	for _, tr := range doc.Trials {
		perFlow, _ := shaper(float64(tr.Size))
		if !near(tr.LinePPS, perFlow) {
			t.Errorf("trial %d: line %v pps per flow, want the shaper's %v", tr.N, tr.LinePPS, perFlow)
		}
		for _, f := range tr.Flows {
			if !near(f.LineRatePct, 100*f.PPS/perFlow) {
				t.Errorf("trial %d flow %s→%s: %.2f %% of line rate, want %.2f (of the shaper, not the 10 G link)", tr.N, f.Sender, f.Receiver, f.LineRatePct, 100*f.PPS/perFlow)
			}
		}
	}

}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-6*math.Max(math.Abs(a), math.Abs(b))+1e-9 }
