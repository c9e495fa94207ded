//go:build linux

package receiver

import "testing"

func TestSumXDPStats(t *testing.T) {
	tests := []struct {
		name           string
		stats          map[string]uint64
		packets, drops uint64
	}{
		{"veth", map[string]uint64{
			"peer_ifindex": 5, "rx_queue_0_xdp_packets": 10, "rx_queue_0_xdp_bytes": 640, "rx_queue_0_drops": 1,
			"rx_queue_0_xdp_redirect": 0, "rx_queue_0_xdp_drops": 7, "rx_queue_0_xdp_tx": 0, "rx_queue_0_xdp_tx_errors": 0,
			"rx_queue_1_xdp_packets": 5, "rx_queue_1_xdp_drops": 2, "tx_queue_0_xdp_xmit": 3, "tx_queue_0_xdp_xmit_err": 1,
		}, 15, 9},
		{"virtio_net", map[string]uint64{"rx_queue_0_packets": 100, "rx_queue_0_xdp_packets": 40, "rx_queue_0_xdp_drops": 40, "rx_queue_1_xdp_packets": 2, "rx_queue_1_xdp_drops": 1}, 42, 41},
		{"mlx5 totals and channels", map[string]uint64{"rx_xdp_drop": 30, "rx0_xdp_drop": 10, "rx1_xdp_drop": 20, "rx_xdp_redirect": 5, "tx0_xdp_xmit": 3}, 0, 30},
		{"ena", map[string]uint64{"queue_0_rx_xdp_drop": 4, "queue_1_rx_xdp_drop": 5}, 0, 9},
		{"no xdp", map[string]uint64{"rx_packets": 1}, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, d := sumXDPStats(tt.stats)
			if p != tt.packets || d != tt.drops {
				t.Errorf("got %d packets %d drops, want %d %d", p, d, tt.packets, tt.drops)
			}
		})
	}
}

// virtio_net counts its XDP_DROP verdicts in rx_dropped too (a receive
// queue's drops include its xdp_drops): those are the receiver program's
// drops of frames it counted, not the host's. Other drivers keep them
// apart.
func TestHostRxDropped(t *testing.T) {
	for _, tt := range []struct {
		driver              string
		rxDropped, xdpDrops uint64
		want                uint64
	}{
		{"virtio_net", 44598, 44598, 0},
		{"virtio_net", 44610, 44598, 12}, // 12 the host dropped itself
		{"virtio_net", 5, 9, 0},          // read between the two counters' updates
		{"veth", 7, 44598, 7},
		{"mlx5_core", 3, 100, 3},
	} {
		if got := hostRxDropped(tt.driver, tt.rxDropped, tt.xdpDrops); got != tt.want {
			t.Errorf("%s: rx_dropped %d, xdp_drops %d: host drops %d, want %d", tt.driver, tt.rxDropped, tt.xdpDrops, got, tt.want)
		}
	}
}
