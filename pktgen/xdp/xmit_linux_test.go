//go:build linux

package xdp

import (
	"errors"
	"maps"
	"strings"
	"testing"

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
