//go:build linux

package receiver

import "testing"

// TestAFXDPRing: the sockets' rings share afxdpUMEM out: 16384
// descriptors for one queue, halving per doubling of the queues, never
// below xsk.DefaultRingSize.
func TestAFXDPRing(t *testing.T) {
	for queues, want := range map[int]int{0: 16384, 1: 16384, 2: 8192, 4: 4096, 8: 2048, 64: 2048} {
		if got := afxdpRing(queues); got != want {
			t.Errorf("afxdpRing(%d) = %d, want %d", queues, got, want)
		}
	}
}
