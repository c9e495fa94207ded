package receiver

import "testing"

func TestRangesText(t *testing.T) {
	for _, tt := range []struct {
		s    StreamReport
		want string
	}{
		{StreamReport{}, "-"},
		{StreamReport{Missing: 3, MissingRanges: [][2]uint32{{4, 5}, {9, 9}}}, "4-5,9"},
		{StreamReport{Missing: 10, MissingRanges: [][2]uint32{{4, 5}}}, "4-5,..."},
	} {
		if got := tt.s.RangesText(); got != tt.want {
			t.Errorf("RangesText(%+v) = %q, want %q", tt.s, got, tt.want)
		}
	}
}
