package receiver

import "testing"

func TestRangesText(t *testing.T) {
	for _, tt := range []struct {
		s    StreamReport
		want string
	}{
		{StreamReport{}, "-"},
		{StreamReport{Missing: 3, MissingRanges: [][2]uint64{{4, 5}, {9, 9}}}, "4-5,9"},
		{StreamReport{Missing: 10, MissingRanges: [][2]uint64{{4, 5}}}, "4-5,..."},
		{StreamReport{Missing: 10, MissingRanges: [][2]uint64{{40, 45}}, MissingRangesFrom: 30}, "...,40-45"},
		{StreamReport{Missing: 10}, "..."},
	} {
		if got := tt.s.RangesText(); got != tt.want {
			t.Errorf("RangesText(%+v) = %q, want %q", tt.s, got, tt.want)
		}
	}
}
