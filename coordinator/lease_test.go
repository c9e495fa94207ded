package coordinator

import (
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	lineratev1 "github.com/linerate/linerate/proto/linerate/v1"
)

// TestRenewInParallel checks that leases are renewed one goroutine per
// agent: a sender whose RenewLease never answers (first in the run's
// order) does not hold up the receiver's renewal, and it fails the run,
// naming it, once its call's own timeout ends it.
func TestRenewInParallel(t *testing.T) {
	s1 := sender("s1", "198.18.0.1", 100, "198.18.0.1")
	s1.hangResult = true // a run that would never end by itself
	s1.hangIn = "RenewLease"
	r1 := receiver("r1", "198.18.0.101")
	c := newFakeCluster(t, s1, r1)
	spec := Spec{Senders: []string{"s1"}, Receivers: []string{"r1"}, Duration: time.Hour, Drain: time.Millisecond, LeaseTTL: 3 * time.Second}
	wire(spec, c)
	t0 := time.Now()
	res, err := (&Runner{Cluster: c, Dial: c.dial}).Run(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != StatusFailed || !strings.Contains(res.Error, "agent s1") || !strings.Contains(res.Error, "renew lease") {
		t.Fatalf("status %s phase %q error %q", res.Status, res.FailedPhase, res.Error)
	}
	if !r1.called("RenewLease") {
		t.Error("r1's lease was not renewed while s1's renewal hung")
	}
	// One tick (1 s) plus s1's call's own timeout (1 s).
	if d := time.Since(t0); d > 10*time.Second {
		t.Errorf("the run took %s to fail on s1's renewal", d)
	}
	if !s1.released || !r1.released {
		t.Errorf("released: s1 %t, r1 %t", s1.released, r1.released)
	}
}

// TestRenewRefusedFailsRun checks that a renewal the agent refuses fails
// the run naming the agent.
func TestRenewRefusedFailsRun(t *testing.T) {
	s1 := sender("s1", "198.18.0.1", 100, "198.18.0.1")
	s1.hangResult = true
	r1 := receiver("r1", "198.18.0.101")
	r1.failIn = "RenewLease"
	c := newFakeCluster(t, s1, r1)
	spec := Spec{Senders: []string{"s1"}, Receivers: []string{"r1"}, Duration: time.Hour, Drain: time.Millisecond, LeaseTTL: 3 * time.Second}
	wire(spec, c)
	res, err := (&Runner{Cluster: c, Dial: c.dial}).Run(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != StatusFailed || !strings.Contains(res.Error, "agent r1") || !strings.Contains(res.Error, "renew lease") || !strings.Contains(res.Error, "scripted failure") {
		t.Fatalf("status %s phase %q error %q", res.Status, res.FailedPhase, res.Error)
	}
	if !s1.released || !r1.released {
		t.Errorf("released: s1 %t, r1 %t", s1.released, r1.released)
	}
}

// TestRunRefusesAgentLeasedElsewhere checks that an agent whose Describe
// shows another coordinator's lease fails the run in describe, naming the
// holder's certificate and the expiry, before any agent is leased.
func TestRunRefusesAgentLeasedElsewhere(t *testing.T) {
	s1 := sender("s1", "198.18.0.1", 100, "198.18.0.1")
	r1 := receiver("r1", "198.18.0.101")
	until := time.Date(2026, 12, 2, 20, 0, 0, 0, time.UTC)
	r1.leasedTo = &lineratev1.LeaseInfo{Holder: "team-b", CoordinatorId: "team-b/run7", ExpiresAt: timestamppb.New(until)}
	c := newFakeCluster(t, s1, r1)
	spec := Spec{Senders: []string{"s1"}, Receivers: []string{"r1"}, Count: 100, Drain: time.Millisecond}
	wire(spec, c)
	res, err := (&Runner{Cluster: c, Dial: c.dial}).Run(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	want := `agent r1, phase describe: describe: leased to certificate "team-b" (coordinator_id "team-b/run7") until 2026-12-02T20:00:00Z`
	if res.Status != StatusFailed || !strings.Contains(res.Error, want) {
		t.Fatalf("status %s error %q, want %q", res.Status, res.Error, want)
	}
	if s1.called("AcquireLease") || r1.called("AcquireLease") {
		t.Error("an agent was leased although r1 is another's")
	}
}
