package coordinator

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/linerate/linerate/internal/cluster/gossip"
	lineratev1 "github.com/linerate/linerate/proto/linerate/v1"
)

// Every pattern turned round: --reverse is each of the pattern's pairs
// the other way, --bidir the pattern's pairs and then each the other way,
// every pair marked with its direction; a plain run marks none.
func TestFlowPairsEveryPattern(t *testing.T) {
	shapes := map[Pattern][2][]string{
		Pairwise: {{"s1", "s2"}, {"r1", "r2"}},
		FanIn:    {{"s1", "s2", "s3"}, {"r1"}},
		FanOut:   {{"s1"}, {"r1", "r2", "r3"}},
		Mesh:     {{"s1", "s2"}, {"r1", "r2"}},
	}
	for _, pattern := range Patterns {
		names := shapes[pattern]
		fwd, err := Pairs(pattern, names[0], names[1])
		if err != nil {
			t.Fatal(err)
		}
		var wantFwd, wantRev []Pair
		for _, p := range fwd {
			wantFwd = append(wantFwd, Pair{Sender: p.Sender, Receiver: p.Receiver, Direction: Forward})
			wantRev = append(wantRev, Pair{Sender: p.Receiver, Receiver: p.Sender, Direction: Reverse})
		}
		for _, tc := range []struct {
			name           string
			bidir, reverse bool
			want           []Pair
		}{
			{"plain", false, false, fwd},
			{"reverse", false, true, wantRev},
			{"bidir", true, false, append(append([]Pair(nil), wantFwd...), wantRev...)},
		} {
			spec := Spec{Pattern: pattern, Senders: names[0], Receivers: names[1], Bidir: tc.bidir, Reverse: tc.reverse, Count: 1}
			if err := spec.Validate(); err != nil {
				t.Fatalf("%s %s: %v", pattern, tc.name, err)
			}
			got, err := spec.FlowPairs()
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s %s (-want +got):\n%s", pattern, tc.name, diff)
			}
			// Every host plays the role the pairs give it: in a run both
			// ways each is a sender and a receiver.
			for _, h := range append(append([]string(nil), names[0]...), names[1]...) {
				role := roleIn(got, h)
				want := gossip.RoleSender
				switch {
				case tc.bidir:
					want = gossip.RoleBoth
				case tc.reverse == slices.Contains(names[0], h):
					want = gossip.RoleReceiver
				}
				if role != want {
					t.Errorf("%s %s: %s plays %q, want %q", pattern, tc.name, h, role, want)
				}
			}
		}
	}
}

func TestSpecRefusesBidirAndReverse(t *testing.T) {
	spec := Spec{Senders: []string{"s1"}, Receivers: []string{"r1"}, Count: 1, Bidir: true, Reverse: true}
	err := spec.Validate()
	if err == nil || !strings.Contains(err.Error(), "bidir and reverse: give one") {
		t.Fatalf("Validate: %v", err)
	}
}

func TestDirectionTotals(t *testing.T) {
	flows := []Flow{
		{Sender: "s1", Receiver: "r1", Direction: Forward, Sent: 100, Received: 90, Lost: 10, LostNetwork: 7, LostReceiverHost: 3, PPS: 50, L1BPS: 1000},
		{Sender: "s2", Receiver: "r1", Direction: Forward, Sent: 100, Received: 100, PPS: 60, L1BPS: 2000},
		{Sender: "r1", Receiver: "s1", Direction: Reverse, Sent: 50, Received: 45, Lost: 5, LostSenderHost: 5, Refused: 2, PPS: 20, L1BPS: 500},
	}
	want := []DirectionTotal{
		{Direction: Forward, Senders: []string{"s1", "s2"}, Receivers: []string{"r1"}, Flows: 2, Sent: 200, Received: 190, Lost: 10, LossRatio: 0.05,
			LostNetwork: 7, LostReceiverHost: 3, PPS: 110, L1BPS: 3000},
		{Direction: Reverse, Senders: []string{"r1"}, Receivers: []string{"s1"}, Flows: 1, Sent: 50, Received: 45, Lost: 5, LossRatio: 0.1,
			LostSenderHost: 5, Refused: 2, PPS: 20, L1BPS: 500},
	}
	if diff := cmp.Diff(want, directionTotals(flows)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if got := directionTotals([]Flow{{Sender: "s1", Receiver: "r1", Sent: 1}}); got != nil {
		t.Errorf("a run one way: %+v, want none", got)
	}
}

// both is a fake agent that sends and receives, offering a backend and a
// receiver method.
func both(name, ip string, sent uint64) *fakeAgent {
	return &fakeAgent{name: name, role: gossip.RoleBoth, ip: ip, mac: "02:00:00:00:02:01", threads: []string{ip}, sent: sent,
		backends: []string{"afpacket"}, methods: []string{"xdp", "afpacket"}}
}

// callsOf counts a fake's calls of one RPC.
func callsOf(f *fakeAgent, call string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, c := range f.calls {
		if c == call {
			n++
		}
	}
	return n
}

// A 2×2 run both ways: four flows, each direction's books apart; every
// host sender and receiver, leased, tuned, armed, configured, started and
// released once, all four sends at one instant, every sending host on a
// port of its own.
func TestRunBidir(t *testing.T) {
	s1, s2 := both("s1", "198.18.0.1", 1000), both("s2", "198.18.0.2", 1000)
	r1, r2 := both("r1", "198.18.0.101", 800), both("r2", "198.18.0.102", 800)
	r1.lose = 10 // of s1's stream (forward)
	s2.lose = 4  // of r2's stream (reverse)
	ports := map[string]uint32{}
	var mu = &s1.mu
	for _, a := range []*fakeAgent{s1, s2, r1, r2} {
		a.queueCPUs = []int32{1} // a NIC with a queue IRQ: tuned
		a.onConfigure = func(c *lineratev1.SenderConfig) {
			mu.Lock()
			ports[a.name] = c.GetUdpDstMin()
			mu.Unlock()
		}
	}
	c := newFakeCluster(t, s1, s2, r1, r2)
	spec := Spec{Senders: []string{"s1", "s2"}, Receivers: []string{"r1", "r2"}, Count: 1000, Drain: time.Millisecond, Bidir: true}
	wire(spec, c)
	samples := map[string]bool{}
	onSample := func(s Sample) {
		mu.Lock()
		samples[s.Agent+" "+s.Role] = true
		mu.Unlock()
	}
	res, err := (&Runner{Cluster: c, Dial: c.dial, OnSample: onSample}).Run(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != StatusOK || len(res.Flows) != 4 {
		t.Fatalf("status %s (%s), %d flows: %v", res.Status, res.Error, len(res.Flows), res.Warnings)
	}
	type book struct {
		sender, receiver string
		dir              Direction
		sent, lost       uint64
	}
	var got []book
	for _, f := range res.Flows {
		got = append(got, book{f.Sender, f.Receiver, f.Direction, f.Sent, f.Lost})
		if f.Received+f.Lost != f.Sent || f.LostNetwork != f.Lost {
			t.Errorf("flow %s→%s: sent %d received %d lost %d (network %d)", f.Sender, f.Receiver, f.Sent, f.Received, f.Lost, f.LostNetwork)
		}
	}
	want := []book{{"s1", "r1", Forward, 1000, 10}, {"s2", "r2", Forward, 1000, 0}, {"r1", "s1", Reverse, 800, 0}, {"r2", "s2", Reverse, 800, 4}}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(book{})); diff != "" {
		t.Errorf("flows (-want +got):\n%s", diff)
	}
	if len(res.Directions) != 2 {
		t.Fatalf("directions: %+v", res.Directions)
	}
	if f, r := res.Directions[0], res.Directions[1]; f.Direction != Forward || f.Sent != 2000 || f.Lost != 10 || f.Flows != 2 ||
		r.Direction != Reverse || r.Sent != 1600 || r.Lost != 4 || !slices.Equal(r.Senders, []string{"r1", "r2"}) || !slices.Equal(r.Receivers, []string{"s1", "s2"}) {
		t.Errorf("directions: %+v", res.Directions)
	}
	for _, h := range res.Hosts {
		if h.Role != "both" {
			t.Errorf("host %s: role %q, want both", h.Name, h.Role)
		}
	}
	var at time.Time
	for _, a := range []*fakeAgent{s1, s2, r1, r2} {
		for _, call := range []string{"AcquireLease", "Tune", "Arm", "Configure", "Start", "Collect", "Result", "ReleaseLease"} {
			if n := callsOf(a, call); n != 1 {
				t.Errorf("%s: %s called %d times, want once", a.name, call, n)
			}
		}
		if at.IsZero() {
			at = a.startAtReq
		} else if !a.startAtReq.Equal(at) {
			t.Errorf("%s started at %s, s1 at %s: want one instant both ways", a.name, a.startAtReq, at)
		}
	}
	// Every host's live samples are of both its roles.
	mu.Lock()
	for _, a := range []string{"s1", "s2", "r1", "r2"} {
		if !samples[a+" sender"] || !samples[a+" receiver"] {
			t.Errorf("%s: live samples %v: want one of each role", a, samples)
		}
	}
	mu.Unlock()
	if want := map[string]uint32{"s1": 10000, "s2": 10001, "r1": 10002, "r2": 10003}; !cmp.Equal(want, ports) {
		t.Errorf("ports %v, want %v: one per sending host", ports, want)
	}
}

// --reverse: the named receivers send to the named senders; each host's
// role in the result is what it did.
func TestRunReverse(t *testing.T) {
	s1 := receiver("s1", "198.18.0.1") // named a sender, receives
	r1 := sender("r1", "198.18.0.101", 500, "198.18.0.101")
	s1.lose = 3
	c := newFakeCluster(t, s1, r1)
	spec := Spec{Senders: []string{"s1"}, Receivers: []string{"r1"}, Count: 500, Drain: time.Millisecond, Reverse: true}
	wire(spec, c)
	res, err := (&Runner{Cluster: c, Dial: c.dial}).Run(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != StatusOK || len(res.Flows) != 1 {
		t.Fatalf("status %s (%s), %d flows", res.Status, res.Error, len(res.Flows))
	}
	if f := res.Flows[0]; f.Sender != "r1" || f.Receiver != "s1" || f.Direction != Reverse || f.Sent != 500 || f.Lost != 3 {
		t.Errorf("flow %+v", f)
	}
	if len(res.Directions) != 1 || res.Directions[0].Direction != Reverse {
		t.Errorf("directions %+v", res.Directions)
	}
	if res.Hosts[0].Name != "s1" || res.Hosts[0].Role != "receiver" || res.Hosts[1].Role != "sender" {
		t.Errorf("hosts %s %s, %s %s", res.Hosts[0].Name, res.Hosts[0].Role, res.Hosts[1].Name, res.Hosts[1].Role)
	}
	if s1.called("Configure") || r1.called("Arm") {
		t.Errorf("s1 configured %t, r1 armed %t: want the named receiver to send only", s1.called("Configure"), r1.called("Arm"))
	}
}

// A host that cannot be what the run makes it is refused before any
// agent is leased, naming the host and why.
func TestRunRefusesHostThatCannotBeBoth(t *testing.T) {
	for _, tc := range []struct {
		name       string
		s1         *fakeAgent
		reverse    bool
		phase      string
		errorHas   []string
		rolesNamed bool
	}{
		{"sender role", sender("s1", "198.18.0.1", 1, "198.18.0.1"), false, PhaseDiscover, []string{"agent s1", "runs as sender", "cannot be both", "--bidir", "--role both"}, true},
		{"receiver role", receiver("s1", "198.18.0.1"), false, PhaseDiscover, []string{"agent s1", "runs as receiver", "--role both"}, true},
		{"no backend", func() *fakeAgent { a := both("s1", "198.18.0.1", 1); a.backends = nil; return a }(), false, PhaseDescribe, []string{"agent s1", "no sender backend", "--bidir"}, false},
		{"no method", func() *fakeAgent { a := both("s1", "198.18.0.1", 1); a.methods = nil; return a }(), false, PhaseDescribe, []string{"agent s1", "no receiver method", "--bidir"}, false},
		{"reverse sender role", sender("s1", "198.18.0.1", 1, "198.18.0.1"), true, PhaseDiscover, []string{"agent s1", "runs as sender", "cannot be a receiver", "--reverse", "--role receiver or both"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r1 := both("r1", "198.18.0.101", 1)
			c := newFakeCluster(t, tc.s1, r1)
			spec := Spec{Senders: []string{"s1"}, Receivers: []string{"r1"}, Count: 1, Drain: time.Millisecond, Bidir: !tc.reverse, Reverse: tc.reverse}
			res, err := (&Runner{Cluster: c, Dial: c.dial}).Run(context.Background(), spec)
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != StatusFailed || res.FailedPhase != tc.phase {
				t.Fatalf("status %s phase %s: %s", res.Status, res.FailedPhase, res.Error)
			}
			for _, s := range tc.errorHas {
				if !strings.Contains(res.Error, s) {
					t.Errorf("error %q: want %q in it", res.Error, s)
				}
			}
			for _, a := range []*fakeAgent{tc.s1, r1} {
				if a.called("AcquireLease") {
					t.Errorf("%s leased: want the refusal before any lease", a.name)
				}
			}
		})
	}
}
