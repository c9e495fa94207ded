//go:build linux

package xdp

import (
	"errors"
	"fmt"
	"maps"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/linerate/linerate/pktgen"
)

// The transmit counters of the drivers the labs send from, as their
// ethtool statistics name them: veth's (the netns lab) and virtio_net's
// (the VM lab's guests), with the XDP_TX counters of received frames
// beside them, which are not this backend's.
func TestTransmitted(t *testing.T) {
	for _, tc := range []struct {
		name          string
		before, after map[string]uint64
		total         uint64
		queues        map[int]uint64
		found         bool
	}{
		{"veth", map[string]uint64{"tx_queue_0_xdp_xmit": 10, "tx_queue_1_xdp_xmit": 0},
			map[string]uint64{"tx_queue_0_xdp_xmit": 110, "tx_queue_1_xdp_xmit": 50, "tx_queue_0_xdp_xmit_errors": 7, "rx_queue_0_xdp_tx": 99},
			150, map[int]uint64{0: 100, 1: 50}, true},
		{"virtio_net offered less refused", map[string]uint64{"tx_queue_4_xdp_tx": 5, "tx_queue_4_xdp_tx_drops": 1},
			map[string]uint64{"tx_queue_4_xdp_tx": 1005, "tx_queue_4_xdp_tx_drops": 31, "tx_queue_5_xdp_tx": 20, "tx_queue_5_xdp_tx_drops": 0, "rx_queue_0_xdp_tx": 400},
			990, map[int]uint64{4: 970, 5: 20}, true},
		// virtio_net without an XDP program on the interface: every frame
		// refused before any counter moved.
		{"virtio_net refusing", map[string]uint64{"tx_queue_0_xdp_tx": 0, "tx_queue_0_xdp_tx_drops": 0},
			map[string]uint64{"tx_queue_0_xdp_tx": 0, "tx_queue_0_xdp_tx_drops": 0, "tx_queue_0_packets": 12},
			0, map[int]uint64{0: 0}, true},
		{"a reset counter counts 0", map[string]uint64{"tx_queue_0_xdp_xmit": 500}, map[string]uint64{"tx_queue_0_xdp_xmit": 20}, 0, map[int]uint64{0: 0}, true},
		{"no transmit counter", nil, map[string]uint64{"rx_packets": 3, "rx_queue_0_xdp_tx": 9}, 0, map[int]uint64{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			total, queues, found := transmitted(tc.before, tc.after)
			if total != tc.total || found != tc.found || !maps.Equal(queues, tc.queues) {
				t.Errorf("transmitted = %d, %v, %v; want %d, %v, %v", total, queues, found, tc.total, tc.queues, tc.found)
			}
		})
	}
}

func TestNoneTransmitted(t *testing.T) {
	if err := noneTransmitted("data0", "virtio_net", 42); !errors.Is(err, pktgen.ErrUnsupported) || !strings.Contains(err.Error(), "none of the 42 frames") {
		t.Errorf("noneTransmitted: %v", err)
	}
}

// TestXmitQueue: the queue a thread's frames are counted on, for the
// drivers whose rule is known.
func TestXmitQueue(t *testing.T) {
	for _, tc := range []struct {
		driver            string
		cpu, queues, cpus int
		want              int
		ok                bool
	}{
		{"veth", 3, 2, 4, 1, true},
		{"virtio_net", 2, 4, 4, 2, true}, // the VM lab's guests: shared, locked
		{"virtio_net", 3, 4, 4, 3, true},
		{"virtio_net", 5, 4, 8, 1, true},  // fewer queues than CPUs: modulo
		{"virtio_net", 1, 12, 4, 9, true}, // 8 of the stack's, then one per CPU
		{"ixgbe", 0, 4, 4, 0, false},
		{"virtio_net", 0, 0, 4, 0, false},
	} {
		if q, ok := xmitQueue(tc.driver, tc.cpu, tc.queues, tc.cpus); q != tc.want || ok != tc.ok {
			t.Errorf("xmitQueue(%s, cpu %d, %d queues, %d CPUs) = %d, %v; want %d, %v", tc.driver, tc.cpu, tc.queues, tc.cpus, q, ok, tc.want, tc.ok)
		}
	}
}

// TestAccountVirtioPerThread: two threads on CPUs 2 and 3 of a 4-queue
// virtio_net in the VM lab's guests (its queues 2 and 3): what each
// queue's driver did not transmit comes off that thread's packets, as
// errors, and the summary's totals follow.
func TestAccountVirtioPerThread(t *testing.T) {
	cfg := &pktgen.Config{Device: "data0", PktSize: 60}
	before := map[string]uint64{}
	after := map[string]uint64{}
	for q := range 4 {
		before[fmt.Sprintf("tx_queue_%d_xdp_tx", q)] = 10
		before[fmt.Sprintf("tx_queue_%d_xdp_tx_drops", q)] = 1
		after[fmt.Sprintf("tx_queue_%d_xdp_tx", q)] = 10
		after[fmt.Sprintf("tx_queue_%d_xdp_tx_drops", q)] = 1
	}
	after["tx_queue_2_xdp_tx"], after["tx_queue_2_xdp_tx_drops"] = 1010, 601 // 400 of 1000
	after["tx_queue_3_xdp_tx"], after["tx_queue_3_xdp_tx_drops"] = 910, 501  // 400 of 900
	r := &run{cfg: cfg, driver: "virtio_net", before: before, possible: 4}   // the guests' 4 vCPUs
	sum := &pktgen.Summary{Packets: 1900, USec: 1_000_000, Threads: []pktgen.ThreadSummary{
		{CPU: 2, Packets: 1000, USec: 1_000_000}, {CPU: 3, Packets: 900, USec: 1_000_000}}}
	if err := r.account(sum, after, hclog.NewNullLogger()); err != nil {
		t.Fatal(err)
	}
	if sum.Threads[0].Packets != 400 || sum.Threads[0].Errors != 600 || sum.Threads[1].Packets != 400 || sum.Threads[1].Errors != 500 || sum.Packets != 800 || sum.Errors != 1100 {
		t.Errorf("accounted %+v, threads %+v: want 400 packets and 600 errors, 400 and 500; 800 and 1100 in all", sum, sum.Threads)
	}
}
