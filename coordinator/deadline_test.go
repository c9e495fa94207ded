package coordinator

import (
	"context"
	"strings"
	"testing"
	"time"
)

// An agent that never answers a call cannot stall a run: every call the
// coordinator makes carries a deadline, the run fails naming the agent,
// the phase and the deadline, and every lease taken is released.
func TestRunCallsCarryDeadlines(t *testing.T) {
	for _, tc := range []struct {
		hangIn, agent, phase string
	}{
		{"*", "s1", PhaseDescribe}, // an agent that answers nothing at all
		{"Describe", "r1", PhaseDescribe},
		{"AcquireLease", "s1", PhaseLease},
		{"AcquireLease", "r1", PhaseLease},
		{"Arm", "r1", PhaseArm},
		{"Configure", "s1", PhaseConfigure},
		{"Start", "s1", PhaseStart},
		{"Collect", "r1", PhaseCollect},
	} {
		t.Run(tc.hangIn+"/"+tc.agent, func(t *testing.T) {
			s1 := sender("s1", "198.18.0.1", 100, "198.18.0.1")
			r1 := receiver("r1", "198.18.0.101")
			map[string]*fakeAgent{"s1": s1, "r1": r1}[tc.agent].hangIn = tc.hangIn
			c := newFakeCluster(t, s1, r1)
			spec := Spec{Senders: []string{"s1"}, Receivers: []string{"r1"}, Count: 100, Drain: time.Millisecond, StartLead: 50 * time.Millisecond}
			wire(spec, c)
			const callTimeout = 300 * time.Millisecond
			t0 := time.Now()
			res, err := (&Runner{Cluster: c, Dial: c.dial, CallTimeout: callTimeout}).Run(context.Background(), spec)
			if err != nil {
				t.Fatal(err)
			}
			if d := time.Since(t0); d > 10*callTimeout {
				t.Errorf("the run took %s with calls bounded by %s", d, callTimeout)
			}
			if res.Status != StatusFailed || res.FailedPhase != tc.phase || !strings.Contains(res.Error, "agent "+tc.agent) || !strings.Contains(res.Error, "DeadlineExceeded") {
				t.Fatalf("status %s phase %q error %q", res.Status, res.FailedPhase, res.Error)
			}
			for _, a := range []*fakeAgent{s1, r1} {
				if a.called("AcquireLease") && a.lease != "" && !a.released && a.hangIn != "*" {
					t.Errorf("%s leased but not released", a.name)
				}
			}
		})
	}
}
