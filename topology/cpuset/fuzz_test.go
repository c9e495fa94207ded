// Fuzz targets: the parsers must never panic or allocate without bound, and
// whatever they accept must survive a format/parse round trip.
package cpuset

import (
	"strings"
	"testing"
)

func FuzzParseList(f *testing.F) {
	for _, seed := range []struct {
		s  string
		nr int
	}{
		{"0", 0}, {"0-3,8-11", 0}, {"0-15:2/4", 0}, {"16-N", 32}, {"all", 4}, {"all:1/2", 8},
		{"0-3,8", 0}, {"5\n", 0}, {"", 0}, {"100-2000:2/25", 0}, {"3-1", 0}, {"a", 0},
		{"1,,2", 0}, {",1", 0}, {"1,", 0}, {"1-", 0}, {"-1", 0}, {"0-3:0/4", 0},
		{"0-3:5/4", 0}, {" 1", 0}, {"N", 0}, {"64", 64}, {"65535", 0}, {"0-N:3/5", -1},
	} {
		f.Add(seed.s, seed.nr)
	}
	f.Fuzz(func(t *testing.T, s string, nr int) {
		set, err := ParseList(s, nr)
		if err != nil {
			if !strings.Contains(err.Error(), "valid: ") {
				t.Errorf("ParseList(%q, %d) error %q lacks a hint", s, nr, err)
			}
			return
		}
		if nr > 0 && set.Max() >= nr {
			t.Fatalf("ParseList(%q, %d) = %v has a CPU >= nr", s, nr, set)
		}
		back, err := ParseList(set.String(), nr)
		if err != nil || !back.Equal(set) {
			t.Fatalf("ParseList(%q, %d) = %v; reparsing %q gives %v, %v", s, nr, set, set.String(), back, err)
		}
	})
}

func FuzzParseMask(f *testing.F) {
	for _, seed := range []string{
		"0", "3", "f", "0000000f", "1,00000000", "00000001,00000000", "0x1ff", "FF\n",
		"ff,ffffc000,000fffff,fc000000", "00000010,00000000,00000000,00000000",
		"ffffffff,ffffffff,00000000,00000000", "00000000,00000000,000f0000,00000000,0000000f",
		"", "xyz", "1,,2", "123456789", "0x1,0",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		set, err := ParseMask(s)
		if err != nil {
			return
		}
		m := set.Mask(set.Max() + 1)
		back, err := ParseMask(m)
		if err != nil || !back.Equal(set) {
			t.Fatalf("ParseMask(%q) = %v; reparsing %q gives %v, %v", s, set, m, back, err)
		}
	})
}

// FuzzMaskRoundTrip builds a set from pairs of bytes (little-endian CPU
// numbers below 65536) and checks both formats round-trip at several widths.
func FuzzMaskRoundTrip(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{0, 0, 1, 0, 2, 0, 3, 0})
	f.Add([]byte{32, 0})
	f.Add([]byte{100, 0, 0x7f, 0})
	f.Add([]byte{0xff, 0xff, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		var cpus []int
		for i := 0; i+1 < len(data); i += 2 {
			cpus = append(cpus, int(data[i])|int(data[i+1])<<8)
		}
		set := Of(cpus...)
		for _, c := range cpus {
			if !set.Contains(c) {
				t.Fatalf("Of(%v) lacks %d", cpus, c)
			}
		}
		if set.Len() > len(cpus) {
			t.Fatalf("Of(%v) has %d CPUs", cpus, set.Len())
		}
		pad := 0
		if len(data) > 0 {
			pad = int(data[0])
		}
		for _, n := range []int{0, set.Max() + 1, min(set.Max()+1+pad, maxCPUs)} {
			m := set.Mask(n)
			if want := (max(n, set.Max()+1, 1)+31)/32 - 1; strings.Count(m, ",") != want {
				t.Fatalf("%v.Mask(%d) = %q, want %d commas", set, n, m, want)
			}
			back, err := ParseMask(m)
			if err != nil || !back.Equal(set) {
				t.Fatalf("%v.Mask(%d) = %q reparses as %v, %v", set, n, m, back, err)
			}
		}
		for _, nr := range []int{0, set.Max() + 1} {
			back, err := ParseList(set.String(), nr)
			if err != nil || !back.Equal(set) {
				t.Fatalf("%v.String() = %q reparses (nr %d) as %v, %v", set, set.String(), nr, back, err)
			}
		}
	})
}
