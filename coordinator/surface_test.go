package coordinator

import (
	"context"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/linerate/linerate/pktgen"
	lineratev1 "github.com/linerate/linerate/proto/linerate/v1"
	recv "github.com/linerate/linerate/receiver"
)

func TestSpecSurface(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  func(*Spec)
		want string // "" = valid
	}{
		{"burst and clone_skb", func(s *Spec) { s.Burst, s.CloneSkb, s.Count = 4, 2, 8000 }, ""},
		{"source ports", func(s *Spec) { s.UDPSrcMin, s.UDPSrcMax = 1024, 1087 }, ""},
		{"one source port", func(s *Spec) { s.UDPSrcMin, s.UDPSrcMax = 7, 7 }, ""},
		{"queue map and node", func(s *Spec) { s.HasQueueMap, s.QueueMapMin, s.QueueMapMax, s.NodeAlloc = true, 0, 3, true }, ""},
		{"negative burst", func(s *Spec) { s.Burst = -1 }, "burst -1: want 1 to 65535"},
		{"negative clone_skb", func(s *Spec) { s.CloneSkb = -1 }, "clone_skb -1: want 0 to 8192"},
		{"copies not a power of two", func(s *Spec) { s.Burst, s.Count = 3, 3000 }, "burst 3 × clone_skb 1: 3 copies of each frame: want a power of two up to 8192"},
		{"too many copies", func(s *Spec) { s.Burst, s.CloneSkb = 1024, 16 }, "16384 copies of each frame"},
		{"burst with a userspace backend", func(s *Spec) { s.Burst, s.Backend = 2, pktgen.BackendXDP }, "burst: kernel pktgen only (backend kernel or auto); backend xdp"},
		{"clone_skb with afpacket", func(s *Spec) { s.CloneSkb, s.Backend = 2, pktgen.BackendAFPacket }, "clone_skb: kernel pktgen only"},
		{"queue map with xdp", func(s *Spec) { s.HasQueueMap, s.Backend = true, pktgen.BackendXDP }, "queue_map: kernel pktgen only"},
		{"node_alloc with xdp", func(s *Spec) { s.NodeAlloc, s.Backend = true, pktgen.BackendXDP }, "node_alloc: kernel pktgen only"},
		{"source ports with xdp", func(s *Spec) { s.UDPSrcMin, s.UDPSrcMax, s.Backend = 1024, 1087, pktgen.BackendXDP }, ""},
		{"burst through the qdisc", func(s *Spec) { s.Burst, s.XmitMode = 2, pktgen.XmitQueue }, "burst 2 with xmit mode queue_xmit: pktgen refuses bursts through the qdisc"},
		{"clone_skb with an imix", func(s *Spec) { s.CloneSkb, s.IMIX = 2, pktgen.IMIX{{Size: 64, Weight: 1}} }, "clone_skb 2 with an imix"},
		{"count not whole bursts", func(s *Spec) { s.Burst, s.Count = 4, 1001 }, "count 1001 with burst 4: pktgen sends whole bursts: want a multiple of 4 (e.g. 1004)"},
		{"fewer bursts than threads", func(s *Spec) { s.Burst, s.Count, s.Threads = 4, 8, 4 }, "count 8 with burst 4: fewer bursts than the 4 threads per flow: want at least 16"},
		{"source port 0 in a range", func(s *Spec) { s.UDPSrcMin, s.UDPSrcMax = 0, 99 }, "udp source ports 0-99: want 1 <= min <= max <= 65534"},
		{"source range upside down", func(s *Spec) { s.UDPSrcMin, s.UDPSrcMax = 99, 10 }, "udp source ports 99-10"},
		{"queue map upside down", func(s *Spec) { s.HasQueueMap, s.QueueMapMin, s.QueueMapMax = true, 3, 1 }, "queue map 3-1: want 0 <= min <= max <= 65535"},
	} {
		s := Spec{Senders: []string{"s1"}, Receivers: []string{"r1"}, Count: 1000}
		tc.set(&s)
		err := s.Validate()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}

func TestSurfaceInto(t *testing.T) {
	s := Spec{Burst: 4, CloneSkb: 2, UDPSrcMin: 1024, UDPSrcMax: 1087, HasQueueMap: true, QueueMapMin: 0, QueueMapMax: 3, NodeAlloc: true}
	if s.Copies() != 8 {
		t.Errorf("copies %d, want 8", s.Copies())
	}
	p := sendPlan{threads: planThreads([]int{0}, 2, []pktgen.Slot{{CPU: 2, Queue: 0}, {CPU: 3, Queue: 1}}, 8000, s.burstUnit(), 0),
		dst: endpoint{ip: pktgenAddr, mac: "m"}, surface: s.surface()}
	c := senderConfig(p)
	if c.Burst != 4 || c.CloneSkb != 2 || c.UdpSrcMin != 1024 || c.UdpSrcMax != 1087 || c.QueueMapMin == nil || *c.QueueMapMin != 0 || c.QueueMapMax != 3 ||
		c.Queues != nil || !c.NodeAlloc || !slices.Equal(c.Counts, []uint64{4000, 4000}) {
		t.Errorf("sender config %v", c)
	}
	// Without a queue map the threads keep their queues.
	p.surface = surface{}
	if c := senderConfig(p); c.QueueMapMin != nil || !slices.Equal(c.Queues, []int32{0, 1}) || c.Burst != 0 || c.NodeAlloc {
		t.Errorf("no surface: %v", c)
	}
}

// pktgenAddr is a destination for sender configurations.
var pktgenAddr = netip.MustParseAddr("198.18.0.101")

func TestPlanThreadsWholeBursts(t *testing.T) {
	// 2004 packets in bursts of 4 over 3 threads: 501 bursts, 167 each.
	p := planThreads([]int{0}, 3, []pktgen.Slot{{CPU: 0, Queue: -1}, {CPU: 1, Queue: -1}, {CPU: 2, Queue: -1}}, 2004, 4, 0)
	if !slices.Equal(p.counts, []uint64{668, 668, 668}) {
		t.Errorf("counts %v, want 668 each", p.counts)
	}
	// 2008: 502 bursts, the remainder's burst to the first thread.
	p = planThreads([]int{0}, 3, []pktgen.Slot{{CPU: 0, Queue: -1}, {CPU: 1, Queue: -1}, {CPU: 2, Queue: -1}}, 2008, 4, 0)
	if !slices.Equal(p.counts, []uint64{672, 668, 668}) {
		t.Errorf("counts %v, want 672, 668, 668", p.counts)
	}
}

func TestSizeReceiverRepeats(t *testing.T) {
	// 1,000,000 packets a second on one stream for 100 ms: 100,000
	// packets, 12,500 frames built (8 copies each): the minimal window.
	s := Spec{Rate: 1_000_000, Burst: 8, Duration: 1}
	z := sizeReceiver(s, []streamLoad{{Threads: 1}})
	if z.Repeats != 8 || z.Window != minWindow {
		t.Errorf("window %d repeats %d, want %d and 8", z.Window, z.Repeats, minWindow)
	}
	if want, _ := (recv.Options{MaxStreams: z.MaxStreams, Window: z.Window, Repeats: 8}).SeqStateBytes(); z.Bytes() != want {
		t.Errorf("bytes %d, want the receiver's %d with repeats", z.Bytes(), want)
	}
	// An unpaced stream on a fast link wants a wide window; the stride
	// of 8192 copies leaves room for 2^16 sequences only.
	s = Spec{Burst: 1024, CloneSkb: 8, Duration: 1}
	if z := sizeReceiver(s, []streamLoad{{Threads: 1, LinkSpeedMbps: 400000}}); z.Window != recv.StrideWindow(8192, 8192) {
		t.Errorf("window %d, want the stride's widest %d", z.Window, recv.StrideWindow(8192, 8192))
	}
}

// A run with burst and clone_skb arms every receiver to count the copies
// (repeats, in steps of the copies) and configures every sender with
// them, its counts in whole bursts.
func TestRunArmsRepeats(t *testing.T) {
	c, spec, agents := fanIn17(t, 2000)
	spec.Burst, spec.CloneSkb, spec.UDPSrcMin, spec.UDPSrcMax = 4, 2, 1024, 1087
	var configs []*lineratev1.SenderConfig
	var mu sync.Mutex
	for _, a := range agents[:len(agents)-1] {
		a.onConfigure = func(cfg *lineratev1.SenderConfig) { mu.Lock(); configs = append(configs, cfg); mu.Unlock() }
	}
	res, err := (&Runner{Cluster: c, Dial: c.dial}).Run(context.Background(), spec)
	if err != nil || res.Status != StatusOK {
		t.Fatalf("%v: status %s %s %v", err, res.Status, res.Error, res.Warnings)
	}
	if res.Copies != 8 {
		t.Errorf("result's copies %d, want 8", res.Copies)
	}
	r1 := agents[len(agents)-1]
	if r1.armed == nil || r1.armed.Repeats != 8 || r1.armed.SeqStride != 8 {
		t.Errorf("armed with %v, want repeats and a sequence stride of 8", r1.armed)
	}
	if len(configs) != 17 {
		t.Fatalf("%d senders configured, want 17", len(configs))
	}
	for _, cfg := range configs {
		if cfg.Burst != 4 || cfg.CloneSkb != 2 || cfg.UdpSrcMin != 1024 || cfg.UdpSrcMax != 1087 || !slices.Equal(cfg.Counts, []uint64{1000, 1000}) {
			t.Errorf("sender configured with %v", cfg)
		}
	}
}
