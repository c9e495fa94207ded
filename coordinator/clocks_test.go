package coordinator

import (
	"context"
	"math"
	"testing"
	"time"

	"google.golang.org/grpc"

	lineratev1 "github.com/linerate/linerate/proto/linerate/v1"
)

// clockOnly is an agent client that answers Clock on a simulated link:
// the agent's clock is offset ahead of the caller's, and each exchange
// takes delays[i] out and back[i] back on the simulated clock.
type clockOnly struct {
	lineratev1.AgentClient
	now        *time.Time
	offset     time.Duration
	out, back  []time.Duration
	i          int
	inTheAgent time.Duration
}

func (c *clockOnly) Clock(context.Context, *lineratev1.ClockRequest, ...grpc.CallOption) (*lineratev1.ClockResponse, error) {
	i := c.i % len(c.out)
	c.i++
	*c.now = c.now.Add(c.out[i])
	t2 := c.now.Add(c.offset)
	*c.now = c.now.Add(c.inTheAgent)
	t3 := c.now.Add(c.offset)
	*c.now = c.now.Add(c.back[i])
	return &lineratev1.ClockResponse{ReceivedUnixNs: t2.UnixNano(), SentUnixNs: t3.UnixNano(), BootId: "b"}, nil
}

// NTP's exchange keeps the lowest round trip: with clocks seconds apart
// and queueing that is one-sided on most exchanges, the offset is within
// half that round trip of the truth, and exact when its two halves are
// equal.
func TestMeasureOffset(t *testing.T) {
	now := time.Unix(1_780_000_000, 0)
	ms := time.Millisecond
	for _, tc := range []struct {
		name      string
		offset    time.Duration
		out, back []time.Duration
		exact     bool
	}{
		{"symmetric fastest", 3500 * ms, []time.Duration{9 * ms, 200 * time.Microsecond, 4 * ms}, []time.Duration{1 * ms, 200 * time.Microsecond, 7 * ms}, true},
		{"asymmetric fastest", -7 * time.Second, []time.Duration{50 * time.Microsecond, 3 * ms}, []time.Duration{450 * time.Microsecond, 3 * ms}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &clockOnly{now: &now, offset: tc.offset, out: tc.out, back: tc.back, inTheAgent: 30 * time.Microsecond}
			o, err := MeasureOffset(context.Background(), c, func() time.Time { return now })
			if err != nil {
				t.Fatal(err)
			}
			fastest := time.Duration(math.MaxInt64)
			for i := range tc.out {
				fastest = min(fastest, tc.out[i]+tc.back[i])
			}
			errOff := (o.Offset - tc.offset).Abs()
			if o.RTT != fastest || o.Samples != offsetExchanges || errOff > o.Bound() || tc.exact && errOff != 0 {
				t.Errorf("offset %v rtt %v over %d (bound %v); want %v ±%v, rtt %v", o.Offset, o.RTT, o.Samples, o.Bound(), tc.offset, o.Bound(), fastest)
			}
		})
	}
}

// A run over hosts whose clocks are seconds apart (none synchronised,
// each its own kernel): every agent's clock is measured, each sender is
// started at the one instant on its own clock, so they start together,
// and the receiver corrects each sender's delays by its clock's offset
// from its own.
func TestRunClocksSecondsApart(t *testing.T) {
	s1 := sender("s1", "198.18.0.1", 100, "198.18.0.1")
	s2 := sender("s2", "198.18.0.2", 100, "198.18.0.2")
	r1 := receiver("r1", "198.18.0.101")
	s1.clockOffset, s2.clockOffset, r1.clockOffset = 3*time.Second, -2*time.Second, 7*time.Second
	s1.bootID, s2.bootID, r1.bootID = "k1", "k2", "k3"
	c := newFakeCluster(t, s1, s2, r1)
	spec := Spec{Senders: []string{"s1", "s2"}, Receivers: []string{"r1"}, Pattern: FanIn, Count: 100, Drain: time.Millisecond}
	wire(spec, c)
	res, err := (&Runner{Cluster: c, Dial: c.dial}).Run(context.Background(), spec)
	if err != nil || res.Status != StatusOK {
		t.Fatalf("run: %v, %+v", err, res)
	}
	if d := s1.startAtReq.Sub(s2.startAtReq); (d - 5*time.Second).Abs() > 5*time.Millisecond {
		t.Errorf("start instants on the senders' clocks %v apart, want their clocks' 5 s", d)
	}
	if d := s1.startedAt.Sub(s2.startedAt).Abs(); d > 50*time.Millisecond {
		t.Errorf("senders started %v apart, want together", d)
	}
	if res.StartSkewUS > 50_000 {
		t.Errorf("start skew %v µs, want the senders' own lateness only", res.StartSkewUS)
	}
	byName := map[string]*Host{}
	for i := range res.Hosts {
		byName[res.Hosts[i].Name] = &res.Hosts[i]
	}
	for _, a := range []*fakeAgent{s1, s2, r1} {
		co := byName[a.name].ClockOffset
		// The clocks do not drift: the measured drift is the two
		// measurements' errors, each within its own half round trip
		// (bufconn under make unit's load: a few µs to a millisecond).
		if co == nil || math.Abs(co.OffsetUS-us(a.clockOffset)) > co.BoundUS+1 || co.Samples != offsetExchanges || math.Abs(co.DriftUS) > co.BoundUS+2000 {
			t.Errorf("%s: clock offset %+v, want %v", a.name, co, a.clockOffset)
		}
	}
	want := map[uint32]time.Duration{10000: -4 * time.Second, 10001: -9 * time.Second}
	if got := r1.armed.ClockCorrections; len(got) != 2 {
		t.Fatalf("corrections %v, want one per sender's port", got)
	}
	for _, cc := range r1.armed.ClockCorrections {
		if d := (time.Duration(cc.AddNs) - want[cc.DstPort]).Abs(); d > 5*time.Millisecond {
			t.Errorf("port %d: correction %v, want %v", cc.DstPort, time.Duration(cc.AddNs), want[cc.DstPort])
		}
	}
	if sp := res.StartSpread; sp == nil || sp.FirstArrival == nil || sp.FirstFrame.Clocks != ClocksEstimated {
		t.Errorf("start spread %+v, want it on %q", sp, ClocksEstimated)
	}
}

// An offset is applied only when it is larger than its bound: one within
// it (processes on one host) is indistinguishable from none.
func TestOffsetKnown(t *testing.T) {
	for _, tc := range []struct {
		o    *Offset
		want time.Duration
	}{
		{nil, 0},
		{&Offset{Offset: 40 * time.Microsecond, RTT: 100 * time.Microsecond}, 0},
		{&Offset{Offset: -50 * time.Microsecond, RTT: 100 * time.Microsecond}, 0},
		{&Offset{Offset: -51 * time.Microsecond, RTT: 100 * time.Microsecond}, -51 * time.Microsecond},
		{&Offset{Offset: 3 * time.Second, RTT: 8 * time.Millisecond}, 3 * time.Second},
	} {
		if got := tc.o.Known(); got != tc.want {
			t.Errorf("%+v: known %v, want %v", tc.o, got, tc.want)
		}
	}
}
