package coordinator

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/linerate/linerate/pktgen"
	lineratev1 "github.com/linerate/linerate/proto/linerate/v1"
)

// --threads beyond a sender's CPUs (the fake agents have 2) is one error
// naming the limit, before any agent is leased or tuned.
func TestRunRefusesThreadsBeyondCPUs(t *testing.T) {
	s1 := sender("s1", "198.18.0.1", 100, "198.18.0.1")
	r1 := receiver("r1", "198.18.0.101")
	c := newFakeCluster(t, s1, r1)
	res, err := (&Runner{Cluster: c, Dial: c.dial}).Run(context.Background(), Spec{Senders: []string{"s1"}, Receivers: []string{"r1"}, Duration: time.Second, Threads: 40})
	if err != nil || res.Status != StatusFailed {
		t.Fatalf("%v: status %s", err, res.Status)
	}
	if want := "s1 has 2 CPUs: --threads at most 2"; !strings.Contains(res.Error, want) || strings.Count(res.Error, "CPU") != 1 || strings.Contains(res.Error, "\n") {
		t.Errorf("error %q, want one line with %q", res.Error, want)
	}
	for _, a := range []*fakeAgent{s1, r1} {
		if a.called("AcquireLease") || a.called("Tune") {
			t.Errorf("%s leased or tuned by a run whose plan cannot run", a.name)
		}
	}
}

// --latency rtt from a sender to more receivers than it has CPUs (the
// fake agents have 2) is one error naming the limit, before any agent
// is leased or tuned: each receiver's latency stream takes a CPU. The
// sender runs kernel pktgen paced on 4 queues, so its load's threads
// (one per queue) would fit: only the latency streams cannot.
func TestRunRefusesRTTBeyondCPUs(t *testing.T) {
	s1 := sender("s1", "198.18.0.1", 100, "198.18.0.1")
	s1.backends, s1.queueCPUs = []string{"kernel"}, []int32{0, 1, 0, 1}
	rs := []*fakeAgent{receiver("r1", "198.18.0.101"), receiver("r2", "198.18.0.102"), receiver("r3", "198.18.0.103")}
	c := newFakeCluster(t, append([]*fakeAgent{s1}, rs...)...)
	res, err := (&Runner{Cluster: c, Dial: c.dial}).Run(context.Background(), Spec{Senders: []string{"s1"}, Receivers: []string{"r1", "r2", "r3"},
		Pattern: FanOut, Duration: time.Second, Rate: 1000, Latency: LatencyRTT})
	if err != nil || res.Status != StatusFailed {
		t.Fatalf("%v: status %s", err, res.Status)
	}
	if want := "latency rtt: s1 sends to 3 receivers and has 2 CPUs on its NIC's node"; !strings.Contains(res.Error, want) {
		t.Errorf("error %q, want %q", res.Error, want)
	}
	for _, a := range append([]*fakeAgent{s1}, rs...) {
		if a.called("AcquireLease") || a.called("Tune") {
			t.Errorf("%s leased or tuned by a run whose latency streams cannot run", a.name)
		}
	}
}

// A paced flow's threads get the flow's rate split with the remainder
// on the first threads: they send exactly its rate together. A rate
// below 1 pps per thread is refused before any agent is touched.
func TestRunSplitsRateExactly(t *testing.T) {
	for _, tt := range []struct {
		rate    uint64
		threads int
		want    string
	}{{7, 2, "[4 3]"}, {1, 1, "[1]"}, {1001, 2, "[501 500]"}} {
		s1 := sender("s1", "198.18.0.1", 100, "198.18.0.1", "198.18.0.2")
		r1 := receiver("r1", "198.18.0.101")
		var cfg *lineratev1.SenderConfig
		s1.onConfigure = func(c *lineratev1.SenderConfig) { cfg = c }
		c := newFakeCluster(t, s1, r1)
		spec := Spec{Senders: []string{"s1"}, Receivers: []string{"r1"}, Count: 200, Rate: tt.rate, Threads: tt.threads, Drain: time.Millisecond}
		wire(spec, c)
		if _, err := (&Runner{Cluster: c, Dial: c.dial}).Run(context.Background(), spec); err != nil || cfg == nil {
			t.Fatalf("rate %d over %d threads: %v (configured: %v)", tt.rate, tt.threads, err, cfg != nil)
		}
		var sum uint64
		for _, r := range cfg.RatesPps {
			sum += r
		}
		if fmt.Sprint(cfg.RatesPps) != tt.want || sum != tt.rate || cfg.RatePps != 0 {
			t.Errorf("rate %d over %d threads: per-thread %v (sum %d), rate_pps %d, want %s", tt.rate, tt.threads, cfg.RatesPps, sum, cfg.RatePps, tt.want)
		}
	}
	s1, r1 := sender("s1", "198.18.0.1", 100, "198.18.0.1"), receiver("r1", "198.18.0.101")
	c := newFakeCluster(t, s1, r1)
	_, err := (&Runner{Cluster: c, Dial: c.dial}).Run(context.Background(), Spec{Senders: []string{"s1"}, Receivers: []string{"r1"}, Count: 10, Rate: 1, Threads: 2})
	if want := "rate 1 pps per flow over 2 threads: below 1 pps per thread: want a rate of at least 2 pps or at most 1 thread"; err == nil || err.Error() != want {
		t.Errorf("rate 1 over 2 threads: %v, want %q", err, want)
	}
	if s1.called("Describe") {
		t.Error("a refused plan reached an agent")
	}
}

// Untuned senders on one kernel (one boot id: the lab's namespaces)
// share its CPUs: the second one's thread goes on the next CPU, not on
// the first one's; a sender on another kernel starts at its own first
// CPU.
func TestRunSpreadsSendersOfOneKernelOverCPUs(t *testing.T) {
	for _, tt := range []struct {
		boot2 string
		want  string
	}{{"", "[0] [1]"}, {"other-kernel", "[0] [0]"}} {
		s1, s2 := sender("s1", "198.18.0.1", 100, "198.18.0.1"), sender("s2", "198.18.0.2", 100, "198.18.0.2")
		s2.bootID = tt.boot2
		r1, r2 := receiver("r1", "198.18.0.101"), receiver("r2", "198.18.0.102")
		var cpus [2][]int32
		s1.onConfigure = func(c *lineratev1.SenderConfig) { cpus[0] = c.Cpus }
		s2.onConfigure = func(c *lineratev1.SenderConfig) { cpus[1] = c.Cpus }
		c := newFakeCluster(t, s1, s2, r1, r2)
		spec := Spec{Senders: []string{"s1", "s2"}, Receivers: []string{"r1", "r2"}, Count: 100, Drain: time.Millisecond, NoTune: true}
		wire(spec, c)
		if _, err := (&Runner{Cluster: c, Dial: c.dial}).Run(context.Background(), spec); err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprint(cpus[0], " ", cpus[1]); got != tt.want {
			t.Errorf("s2's boot id %q: cpus %s, want %s", tt.boot2, got, tt.want)
		}
	}
}

// Kernel pktgen, paced, on a tuned sender runs one device per queue on
// the CPU its IRQ was pinned to, CPUs repeating (4 queues on 2 CPUs: 4
// streams); unpaced, one device per CPU (a kpktgend thread serves one
// unpaced device: pktgen.KernelPerQueue); a userspace backend one thread
// per CPU, on its first queue.
func TestRunKernelPktgenDevicePerQueue(t *testing.T) {
	for _, tt := range []struct {
		backend  pktgen.BackendName
		backends []string
		rate     uint64
		cpus     string
		queues   string
	}{
		{"auto", []string{"kernel", "xdp"}, 1000, "[2 3 2 3]", "[0 1 2 3]"},
		{"kernel", []string{"kernel"}, 1000, "[2 3 2 3]", "[0 1 2 3]"},
		{"kernel", []string{"kernel"}, 0, "[2 3]", "[0 1]"},
		{"auto", []string{"kernel", "xdp"}, 0, "[2 3]", "[0 1]"},
		{"auto", []string{"xdp", "afpacket"}, 1000, "[2 3]", "[0 1]"},
		{"xdp", []string{"kernel", "xdp"}, 1000, "[2 3]", "[0 1]"},
		{"userspace", []string{"kernel", "xdp"}, 1000, "[2 3]", "[0 1]"},
	} {
		s1 := sender("s1", "198.18.0.1", 100, "198.18.0.1", "198.18.0.2", "198.18.0.3", "198.18.0.4")
		s1.queueCPUs, s1.backends = []int32{2, 3, 2, 3}, tt.backends
		r1 := receiver("r1", "198.18.0.101")
		var cfg *lineratev1.SenderConfig
		s1.onConfigure = func(c *lineratev1.SenderConfig) { cfg = c }
		c := newFakeCluster(t, s1, r1)
		spec := Spec{Senders: []string{"s1"}, Receivers: []string{"r1"}, Count: 400, Rate: tt.rate, Backend: tt.backend, Drain: time.Millisecond}
		wire(spec, c)
		if _, err := (&Runner{Cluster: c, Dial: c.dial}).Run(context.Background(), spec); err != nil || cfg == nil {
			t.Fatalf("backend %s offering %v at %d pps: %v (configured: %v)", tt.backend, tt.backends, tt.rate, err, cfg != nil)
		}
		if fmt.Sprint(cfg.Cpus) != tt.cpus || fmt.Sprint(cfg.Queues) != tt.queues {
			t.Errorf("backend %s offering %v at %d pps: cpus %v queues %v, want %s %s", tt.backend, tt.backends, tt.rate, cfg.Cpus, cfg.Queues, tt.cpus, tt.queues)
		}
	}
}
