package pktgen

import "testing"

// A range is one number or A-B; anything else is not one, whatever its
// numbers would be (bounds are the caller's).
func TestParseRange(t *testing.T) {
	for _, tc := range []struct {
		in     string
		lo, hi int
		ok     bool
	}{
		{"7", 7, 7, true}, {"1024-1087", 1024, 1087, true}, {" 0 - 3 ", 0, 3, true}, {"9-2", 9, 2, true},
		{"", 0, 0, false}, {"-3", 0, 0, false}, {"3-", 0, 0, false}, {"a-b", 0, 0, false}, {"1-2-3", 0, 0, false}, {"1,2", 0, 0, false},
	} {
		lo, hi, ok := ParseRange(tc.in)
		if ok != tc.ok || ok && (lo != tc.lo || hi != tc.hi) {
			t.Errorf("ParseRange(%q) = %d, %d, %t: want %d, %d, %t", tc.in, lo, hi, ok, tc.lo, tc.hi, tc.ok)
		}
	}
}
