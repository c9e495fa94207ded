package agent

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/linerate/linerate/doctor/live"
	lineratev1 "github.com/linerate/linerate/proto/linerate/v1"
)

// Describe carries the clock the host's reader gave; an unreadable clock
// is unsynchronised and says why.
func TestDescribeClock(t *testing.T) {
	s := unitService(t, RoleSender, fakeNetOS{})
	s.inv.clock = func() clockInfo {
		return clockInfo{synchronised: true, estErrorUS: 120, maxErrorUS: 4000, state: 0, status: 0x2001, bootID: "b1"}
	}
	p := describeToProto(s.inv.describe("v1")).Clock
	if p == nil || !p.Synchronised || p.EstErrorUs != 120 || p.MaxErrorUs != 4000 || p.BootId != "b1" || p.Status != 0x2001 || p.Error != "" {
		t.Errorf("clock %v", p)
	}
	s.inv.clock = func() clockInfo {
		return clockInfo{synchronised: true, bootID: "b1", err: errors.New("adjtimex (read only): operation not permitted")}
	}
	if p := describeToProto(s.inv.describe("v1")).Clock; p.Synchronised || p.Error == "" || p.BootId != "b1" {
		t.Errorf("unreadable clock %v", p)
	}
}

// The host's own clock reads (Linux: adjtimex with modes 0, which any
// user may call) and names the kernel's boot id.
func TestReadHostClock(t *testing.T) {
	c := readHostClock()
	if c.err != nil {
		t.Skip(c.err)
	}
	if c.bootID == "" || c.estErrorUS < 0 || c.maxErrorUS < 0 || c.synchronised != live.Synced(c.state, c.status) {
		t.Errorf("host clock %+v", c)
	}
}

// Clock answers with its arrival and departure on this host's realtime
// clock, in order, between the caller's send and receipt (one host: one
// clock), and the boot id.
func TestClockCall(t *testing.T) {
	s := unitService(t, RoleSender, fakeNetOS{})
	s.inv.clock = func() clockInfo { return clockInfo{bootID: "b1"} }
	before := time.Now()
	resp, err := s.Clock(context.Background(), &lineratev1.ClockRequest{})
	after := time.Now()
	if err != nil {
		t.Fatal(err)
	}
	t2, t3 := time.Unix(0, resp.ReceivedUnixNs), time.Unix(0, resp.SentUnixNs)
	if t2.Before(before.Truncate(0)) || t3.Before(t2) || t3.After(after.Truncate(0)) || resp.BootId != "b1" {
		t.Errorf("clock %v .. %v (boot %q), asked at %v, answered by %v", t2, t3, resp.BootId, before, after)
	}
}
