package ethtool

import (
	"maps"
	"slices"
	"testing"
)

func TestDecodeStrings(t *testing.T) {
	raw := make([]byte, 3*gstringLen)
	copy(raw, "rx_queue_0_xdp_packets")
	copy(raw[gstringLen:], "a_name_that_fills_all_32_bytes!!") // no NUL
	// the third is empty
	if got := decodeStrings(raw, 3); !slices.Equal(got, []string{"rx_queue_0_xdp_packets", "a_name_that_fills_all_32_bytes!!", ""}) {
		t.Errorf("decoded %q", got)
	}
	if got := decodeStrings(raw[:gstringLen+5], 3); len(got) != 1 {
		t.Errorf("short buffer: %q, want the one whole name", got)
	}
}

func TestFoldStats(t *testing.T) {
	got := foldStats([]string{"rx_packets", "xdp_drop", "xdp_drop", "extra"}, []uint64{10, 1, 2})
	if want := map[string]uint64{"rx_packets": 10, "xdp_drop": 3}; !maps.Equal(got, want) {
		t.Errorf("folded %v, want %v", got, want)
	}
}
