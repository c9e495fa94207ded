package campaign

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/linerate/linerate/coordinator"
	"github.com/linerate/linerate/coordinator/results"
	"github.com/linerate/linerate/internal/cluster/gossip"
	"github.com/linerate/linerate/receiver"
)

// A campaign's trial and the results package's trial of the same run
// agree: sent, received, lost, loss ratio, generator-limited, and the
// achieved rate, which has one derivation (results.AchievedPPS) — here
// the mean of two flows whose senders reached different rates, neither
// equal to sent over the window.
func TestTrialAgreesWithRunTrial(t *testing.T) {
	res := &coordinator.Result{RunID: "fixture", Status: coordinator.StatusOK, FrameSize: 64, RatePPS: 1000}
	for _, f := range []struct {
		s, r           string
		sent, received uint64
		achieved       float64
	}{{"s1", "r1", 980, 975, 995}, {"s2", "r2", 1000, 1000, 1003}} {
		res.Flows = append(res.Flows, coordinator.Reconcile(coordinator.FlowInput{
			Sender: f.s, Receiver: f.r, Streams: []coordinator.Stream{{Sent: f.sent, StreamReport: receiver.StreamReport{Received: f.received}}},
			DurationSec: 1.02, FrameBytes: 60, OfferedPPS: 1000, AchievedPPS: f.achieved,
		}))
	}
	r := &Runner{Cluster: lab2x2, Run: func(context.Context, coordinator.Spec) (*coordinator.Result, error) { return res, nil }}
	y := "agents: {senders: [s1, s2], receivers: [r1, r2]}\nframe_sizes: [64]\nrates: [1000]\ntrial_duration: 1s\n"
	doc, err := r.RunCampaign(context.Background(), parse(t, y), []byte(y))
	if err != nil || len(doc.Trials) != 1 {
		t.Fatalf("%v, %d trials", err, len(doc.Trials))
	}
	got, want := doc.Trials[0], results.RunTrial(res)
	if got.AchievedPPS != 999 {
		t.Errorf("campaign trial achieved %v pps per flow, want the mean of the senders' 995 and 1003", got.AchievedPPS)
	}
	same := func(t results.Trial) any {
		return []any{t.Sent, t.Received, t.Lost, t.LossRatio, t.AchievedPPS, t.GeneratorLimited, len(t.Flows)}
	}
	if diff := cmp.Diff(same(want), same(got)); diff != "" {
		t.Errorf("campaign and results disagree on the trial (-results +campaign):\n%s", diff)
	}
	if want.DurationSec != 1.02 {
		t.Errorf("a run's trial lasts its flows' send window, 1.02 s: %v", want.DurationSec)
	}
}

// The selector matches the tags as serf announces them, and the name.
func TestMatches(t *testing.T) {
	m := coordinator.Member{Name: "s1", Tags: gossip.Tags{Role: "sender", Iface: "data0", NUMA: 1, Queues: 4, SpeedMbps: 10000, Backends: []string{"kernel", "xdp"}, Version: "v1"}}
	for sel, want := range map[string]bool{
		"role=sender": true, "iface=data0": true, "numa=1": true, "queues=4": true, "speed=10000": true,
		"backend=kernel,xdp": true, "version=v1": true, "name=s1": true, "numa=0": false, "role=receiver": false, "grpc=x": false,
	} {
		k, v, _ := strings.Cut(sel, "=")
		if got := matches(m, map[string]string{k: v}); got != want {
			t.Errorf("matches(%s) = %t, want %t", sel, got, want)
		}
	}
}
