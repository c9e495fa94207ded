//go:build linux

package receiver

import (
	"errors"
	"strings"
	"testing"

	"github.com/linerate/linerate/internal/xsk"
)

// TestAFXDPRing: the sockets' rings share afxdpUMEM out: 16384
// descriptors for one queue, halving per doubling of the queues (or of
// the chunk), never below xsk.DefaultRingSize.
func TestAFXDPRing(t *testing.T) {
	for queues, want := range map[int]int{0: 16384, 1: 16384, 2: 8192, 4: 4096, 8: 2048, 64: 2048} {
		if got := afxdpRing(queues, xsk.DefaultFrameSize); got != want {
			t.Errorf("afxdpRing(%d) = %d, want %d", queues, got, want)
		}
	}
	if got := afxdpRing(1, xsk.MaxFrameSize); got != 8192 {
		t.Errorf("afxdpRing(1) of 4096-byte chunks = %d, want 8192", got)
	}
}

// TestAFXDPFrameSize: the chunk holds the largest frame the MTU lets
// in, tags included, after the kernel's headroom; a jumbo MTU no chunk
// holds is refused by name.
func TestAFXDPFrameSize(t *testing.T) {
	for _, tt := range []struct{ mtu, want int }{{1500, 2048}, {1770, 2048}, {1771, 4096}, {3818, 4096}} {
		if got, err := afxdpFrameSize("eth1", tt.mtu); err != nil || got != tt.want {
			t.Errorf("MTU %d: chunk %d (%v), want %d", tt.mtu, got, err, tt.want)
		}
	}
	_, err := afxdpFrameSize("eth1", 9000)
	if !errors.Is(err, ErrOptions) || !strings.Contains(err.Error(), "--method afxdp on eth1: its MTU 9000 delivers frames of up to 9022 bytes") || !strings.Contains(err.Error(), "want an MTU of at most 3818") {
		t.Errorf("MTU 9000: %v", err)
	}
}
