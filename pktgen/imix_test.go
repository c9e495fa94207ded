package pktgen

import (
	"math"
	"testing"
)

// An imix's sizes count the FCS; its mean frame, as every rate of it is
// computed, does not.
func TestIMIXFrameBytes(t *testing.T) {
	mix := IMIX{{Size: 64, Weight: 7}, {Size: 570, Weight: 4}, {Size: 1518, Weight: 1}}
	if got := mix[2].PktSize(); got != 1514 {
		t.Errorf("pkt size of a 1518-byte frame: %d, want 1514", got)
	}
	if got, want := mix.FrameBytes(), (60.0*7+566*4+1514)/12; math.Abs(got-want) > 1e-9 {
		t.Errorf("mean frame %v, want %v", got, want)
	}
	c := Config{IMIX: mix}
	if got := c.FrameBytes(); got != mix.FrameBytes() {
		t.Errorf("config's mean frame %v, want the mix's %v", got, mix.FrameBytes())
	}
	if got := (IMIX{}).FrameBytes(); got != 0 {
		t.Errorf("no mix: %v, want 0", got)
	}
}

// An entry is a frame a run offers, 64 to 9018 bytes with its FCS, with a
// weight of at least 1; anything else is refused with what would do.
func TestIMIXEntryCheck(t *testing.T) {
	for _, tt := range []struct {
		e  IMIXEntry
		ok bool
	}{
		{IMIXEntry{Size: 64, Weight: 1}, true},
		{IMIXEntry{Size: 9018, Weight: 7}, true},
		{IMIXEntry{Size: 63, Weight: 1}, false},
		{IMIXEntry{Size: 9019, Weight: 1}, false},
		{IMIXEntry{Size: 570, Weight: 0}, false},
	} {
		err := tt.e.Check()
		if (err == nil) != tt.ok {
			t.Errorf("%+v: %v, want ok %v", tt.e, err, tt.ok)
		}
		if err != nil && err.Error() != "want a frame size of 64-9018 bytes (with FCS) and a weight of at least 1" {
			t.Errorf("%+v: %q does not say what would do", tt.e, err)
		}
	}
}
