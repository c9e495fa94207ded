//go:build linux

package xdp

import "testing"

// TestClockEvery checks that a clock group is the transmit bulk or less,
// and always divides the batch (a group never spans two batches).
func TestClockEvery(t *testing.T) {
	for _, c := range []struct{ batch, want uint32 }{
		{64, 16}, {256, 16}, {16, 16}, {48, 16}, {8, 8}, {24, 8}, {100, 4}, {6, 2}, {1, 1}, {255, 1},
	} {
		if got := clockEvery(c.batch); got != c.want || c.batch%got != 0 {
			t.Errorf("clockEvery(%d) = %d, want %d", c.batch, got, c.want)
		}
	}
}
