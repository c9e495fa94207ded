package lab

import "testing"

func TestParseBitRate(t *testing.T) {
	for in, want := range map[string]uint64{"20mbit": 20e6, "1gbit": 1e9, "500kbit": 500e3, "64000bit": 64000, "1.5Gbit": 1.5e9, "100000": 100000, "8kbit": 8000, "400gbit": 400e9} {
		if got, err := ParseBitRate(in); err != nil || got != want {
			t.Errorf("ParseBitRate(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "fast", "-1mbit", "0", "1tbit", "inf", "nan", "7999bit", "401gbit"} {
		if got, err := ParseBitRate(in); err == nil {
			t.Errorf("ParseBitRate(%q) = %d; want an error", in, got)
		}
	}
}
