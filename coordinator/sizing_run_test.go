package coordinator

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// fanIn17 are 17 fake senders of two threads each and one receiver, and
// their spec: the 34 streams into one receiver.
func fanIn17(t *testing.T, count uint64) (*fakeCluster, Spec, []*fakeAgent) {
	var agents []*fakeAgent
	spec := Spec{Pattern: FanIn, Receivers: []string{"r1"}, Count: count, Threads: 2, Drain: time.Millisecond}
	for i := range 17 {
		name := fmt.Sprintf("s%d", i+1)
		agents = append(agents, sender(name, fmt.Sprintf("198.18.0.%d", i+1), 1000, fmt.Sprintf("198.18.0.%d", i+1), fmt.Sprintf("198.18.1.%d", i+1)))
		spec.Senders = append(spec.Senders, name)
	}
	agents = append(agents, receiver("r1", "198.18.0.101"))
	c := newFakeCluster(t, agents...)
	wire(spec, c)
	return c, spec, agents
}

// The receiver is armed with a table for every stream the plan sends it
// (34, and 16 to spare) and a window from the count (the smallest: the
// whole run fits).
func TestRunArmsReceiverSized(t *testing.T) {
	c, spec, agents := fanIn17(t, 2000)
	res, err := (&Runner{Cluster: c, Dial: c.dial}).Run(context.Background(), spec)
	if err != nil || res.Status != StatusOK {
		t.Fatalf("%v: status %s %s %v", err, res.Status, res.Error, res.Warnings)
	}
	r1 := agents[len(agents)-1]
	if r1.armed == nil || r1.armed.MaxStreams != 50 || r1.armed.Window != 1<<16 {
		t.Errorf("armed with %v, want 50 streams and a window of 65536 sequences", r1.armed)
	}
}

// A plan over a receiver's announced budget fails in describe, naming
// the numbers, before any agent is leased.
func TestRunRefusesOverReceiverBudget(t *testing.T) {
	c, spec, agents := fanIn17(t, 1<<27)
	agents[len(agents)-1].memory = 2 << 20
	res, err := (&Runner{Cluster: c, Dial: c.dial}).Run(context.Background(), spec)
	if err != nil || res.Status != StatusFailed {
		t.Fatalf("%v: status %s", err, res.Status)
	}
	if want := "agent r1, phase describe: 34 streams (a table of 50) × a window of 2^21 sequences need 25 MiB of sequence state, its receiver budget is 2 MiB: fewer streams per receiver, a lower rate or raise --receiver-memory"; res.Error != want {
		t.Errorf("error %q, want %q", res.Error, want)
	}
	for _, a := range agents {
		if a.called("AcquireLease") {
			t.Errorf("%s leased by a run over the receiver's budget", a.name)
		}
	}
	if strings.Contains(res.Error, "\n") {
		t.Errorf("error of several lines: %q", res.Error)
	}
}
