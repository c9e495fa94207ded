package campaign

import (
	"context"
	"strings"
	"testing"

	"github.com/linerate/linerate/coordinator"
)

// A percentage that comes to less than 1 pps per flow is refused, never
// run at rate 0 (which the coordinator reads as unpaced: line rate).
func TestCampaignRefusesRateBelowOnePPS(t *testing.T) {
	d := &dut{limit: func(int) float64 { return 1e9 }}
	var ran []uint64
	run := func(ctx context.Context, s coordinator.Spec) (*coordinator.Result, error) {
		ran = append(ran, s.Rate)
		return d.run(ctx, s)
	}
	r := &Runner{Cluster: lab2x2, Run: run, LineRate: fixedLine(100000)}
	doc, err := r.RunCampaign(context.Background(), parse(t, `agents: {senders: [s1], receivers: [r2]}
frame_sizes: [64]
rates: [0.0001%]
trial_duration: 100ms
between_trials: {pause: 1ms}
`), nil)
	if err != nil || doc.Status != coordinator.StatusFailed || !strings.Contains(doc.Error, "trial at 0.1 pps, 64-byte frames: below 1 pps per flow") {
		t.Errorf("%v: status %s, error %q, want the trial refused below 1 pps", err, doc.Status, doc.Error)
	}
	if len(ran) > 0 {
		t.Errorf("runs at %v pps", ran)
	}
}
