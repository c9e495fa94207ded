package coordinator

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// names are n agent names prefix1..prefixN.
func names(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s%d", prefix, i+1)
	}
	return out
}

// Every sender thread sending to a receiver is one of its streams; the
// table has a quarter (at least 16) to spare.
func TestSizeReceiverStreams(t *testing.T) {
	for _, tc := range []struct {
		pattern            Pattern
		senders, receivers int
		threads            int // --threads; 0: automatic (2 CPUs, tuned)
		want               map[string]int
	}{
		{Pairwise, 3, 3, 2, map[string]int{"r1": 2, "r2": 2, "r3": 2}},
		{FanIn, 17, 1, 2, map[string]int{"r1": 34}},
		{FanIn, 17, 1, 0, map[string]int{"r1": 34}}, // one flow per sender, a thread per tuned queue
		{FanOut, 1, 3, 0, map[string]int{"r1": 1, "r2": 1, "r3": 1}},
		{Mesh, 3, 2, 0, map[string]int{"r1": 3, "r2": 3}},
		{Mesh, 3, 2, 2, map[string]int{"r1": 6, "r2": 6}},
		{FanIn, 512, 1, 2, map[string]int{"r1": 1024}},
	} {
		spec := Spec{Pattern: tc.pattern, Senders: names("s", tc.senders), Receivers: names("r", tc.receivers), Count: 1 << 20, Threads: tc.threads}
		pairs, err := Pairs(spec.Pattern, spec.Senders, spec.Receivers)
		if err != nil {
			t.Fatal(err)
		}
		flowsOf := map[string]int{}
		for _, p := range pairs {
			flowsOf[p.Sender]++
		}
		for r, want := range tc.want {
			z := sizeReceiver(spec, loadsTo(pairs, r, func(s string) (int, int64) {
				return threadsPerFlow(spec.Threads, flowsOf[s], true, 2, spec.Rate, spec.Count), 10000
			}))
			if z.Streams != want || z.MaxStreams != want+max(16, want/4) {
				t.Errorf("%s %d→%d threads %d: %s has %d streams, a table of %d; want %d and %d", tc.pattern, tc.senders, tc.receivers, tc.threads, r, z.Streams, z.MaxStreams, want, want+max(16, want/4))
			}
		}
	}
}

// The window per stream: at least 100 ms of the busiest stream's packets
// — its share of the rate, else the line rate of the slower link (a
// thread at most twice its even share) — or its whole count when less,
// with 1/16 to spare, a power of two from 2^16 to 2^27; the receiver's
// default 2^21 when nothing bounds it. The run's duration does not
// matter.
func TestSizeReceiverWindow(t *testing.T) {
	for _, tc := range []struct {
		what    string
		spec    Spec
		threads int
		link    int64
		want    uint64
		from    string
	}{
		{"count over 2 threads, less than 100 ms", Spec{Count: 1_000_001}, 2, 10000, 1 << 20, "count"},
		{"a small count", Spec{Count: 1000}, 1, 10000, 1 << 16, "count"},
		{"a count at an unknown speed", Spec{Count: 1 << 25}, 1, 0, 1 << 26, "count"},
		{"rate over 4 threads", Spec{Rate: 1_000_000, Duration: 10 * time.Second}, 4, 10000, 1 << 16, "rate"},
		{"10 Mpps on one thread", Spec{Rate: 10_000_000, Duration: time.Hour}, 1, 10000, 1 << 21, "rate"},
		{"the 2000 pps lab run", Spec{Rate: 2000, Duration: 2 * time.Second}, 2, 10000, 1 << 16, "rate"},
		// 64-byte frames at 10 Gb/s: 14 880 952 pps, 1 488 095 in 100 ms.
		{"unpaced, one thread", Spec{Duration: 10 * time.Second, FrameSize: 64}, 1, 10000, 1 << 21, "line rate"},
		{"unpaced, one thread, 10 minutes", Spec{Duration: 10 * time.Minute, FrameSize: 64}, 1, 10000, 1 << 21, "line rate"},
		{"unpaced, four threads", Spec{Duration: 10 * time.Second, FrameSize: 64}, 4, 10000, 1 << 20, "line rate"},
		{"unpaced, 64 queues, 10 minutes", Spec{Duration: 10 * time.Minute, FrameSize: 64}, 64, 10000, 1 << 16, "line rate"},
		{"unpaced, link speed unknown", Spec{Duration: time.Second, FrameSize: 64}, 1, 0, 1 << 21, "default"},
		{"100 Gb/s, one thread", Spec{Duration: time.Second, FrameSize: 64}, 1, 100000, 1 << 24, "line rate"},
	} {
		z := sizeReceiver(tc.spec, []streamLoad{{Threads: tc.threads, LinkSpeedMbps: tc.link}})
		if z.Window != tc.want || z.From != tc.from {
			t.Errorf("%s: window %d from %s, want %d from %s", tc.what, z.Window, z.From, tc.want, tc.from)
		}
	}
	// The busiest stream decides: a 1 Gb/s sender and a 10 Gb/s one.
	z := sizeReceiver(Spec{Duration: time.Second, FrameSize: 64}, []streamLoad{{Threads: 1, LinkSpeedMbps: 1000}, {Threads: 1, LinkSpeedMbps: 10000}})
	if z.Window != 1<<21 {
		t.Errorf("mixed links: %d", z.Window)
	}
}

// The documented figures (README, receiver/doc.go): a 10-minute 10 GbE
// line-rate run on 64 queues (64 streams into one receiver) needs
// 1.25 MiB of windows, one line-rate stream 8.5 MiB, 1,100 streams of
// 2,000 pps 21.5 MiB (at the default window they would need 687.5 MiB).
func TestReceiverMemoryFigures(t *testing.T) {
	for _, tc := range []struct {
		what  string
		spec  Spec
		loads []streamLoad
		want  uint64
	}{
		{"64 queues at 10 GbE line rate, 10 minutes", Spec{Duration: 10 * time.Minute, FrameSize: 64}, []streamLoad{{Threads: 64, LinkSpeedMbps: 10000}}, 80 * 16 << 10},
		{"one stream at 10 GbE line rate, 10 minutes", Spec{Duration: 10 * time.Minute, FrameSize: 64}, []streamLoad{{Threads: 1, LinkSpeedMbps: 10000}}, 17 * 512 << 10},
		{"1,100 streams of 2000 pps", Spec{Rate: 2000, Duration: 10 * time.Minute}, slices.Repeat([]streamLoad{{Threads: 1, LinkSpeedMbps: 10000}}, 1100), 1375 * 16 << 10},
		{"1,100 streams at the default window", Spec{Duration: 10 * time.Minute}, slices.Repeat([]streamLoad{{Threads: 1}}, 1100), 1375 * 512 << 10},
	} {
		if got := sizeReceiver(tc.spec, tc.loads).Bytes(); got != tc.want {
			t.Errorf("%s: %d bytes, want %d", tc.what, got, tc.want)
		}
	}
}

// A plan over the receiver's budget is refused naming the streams, the
// table, the window and both sizes; 32 slots of 2^25 sequences are
// exactly 256 MiB.
func TestReceiverSizeCheck(t *testing.T) {
	sixteen := slices.Repeat([]streamLoad{{Threads: 1}}, 16)
	atBudget := sizeReceiver(Spec{Count: 1 << 25 * 16 / 17}, sixteen)
	if atBudget.MaxStreams != 32 || atBudget.Bytes() != 256<<20 {
		t.Fatalf("16 streams of 2^25: a table of %d, %d bytes", atBudget.MaxStreams, atBudget.Bytes())
	}
	if err := atBudget.check(256 << 20); err != nil {
		t.Errorf("exactly at the budget: %v", err)
	}
	over := sizeReceiver(Spec{Count: 1 << 25}, sixteen)
	err := over.check(256 << 20)
	if want := "16 streams (a table of 32) × a window of 2^26 sequences need 512 MiB of sequence state, its receiver budget is 256 MiB: fewer streams per receiver, a lower rate or raise --receiver-memory"; err == nil || err.Error() != want {
		t.Errorf("over: %v, want %q", err, want)
	}
	// The fan-in: 17 senders × 2 threads of 2^26 sequences each,
	// links of unknown speed.
	fanIn := sizeReceiver(Spec{Count: 1 << 27}, slices.Repeat([]streamLoad{{Threads: 2}}, 17))
	err = fanIn.check(256 << 20)
	if want := "34 streams (a table of 50) × a window of 2^27 sequences need 1600 MiB of sequence state, its receiver budget is 256 MiB"; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("fan-in: %v, want %q", err, want)
	}
	if err := fanIn.check(0); err != nil {
		t.Errorf("no budget announced: %v", err)
	}
	if err := sizeReceiver(Spec{Count: 1}, []streamLoad{{Threads: 70000}}).check(0); err == nil || err.Error() != "70000 streams planned: a receiver counts at most 65536: fewer threads or senders per receiver" {
		t.Errorf("70000 streams: %v", err)
	}
}
