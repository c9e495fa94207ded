package cpuset

import (
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// span returns the CPUs lo..hi inclusive.
func span(lo, hi int) []int {
	var cpus []int
	for c := lo; c <= hi; c++ {
		cpus = append(cpus, c)
	}
	return cpus
}

func TestParseList(t *testing.T) {
	tests := []struct {
		in   string
		nr   int
		want []int
	}{
		{"", 0, nil},
		{"\n", 0, nil},
		{"0", 0, []int{0}},
		{"5\n", 0, []int{5}},
		{"0-3 \n", 0, span(0, 3)},
		{"0-3,8-11", 0, []int{0, 1, 2, 3, 8, 9, 10, 11}},
		{"0-3,8", 0, []int{0, 1, 2, 3, 8}},
		{"8,0-3", 0, []int{0, 1, 2, 3, 8}},
		{"1,1,0-2", 0, []int{0, 1, 2}},
		{"007", 0, []int{7}},
		{"0-15:2/4", 0, []int{0, 1, 4, 5, 8, 9, 12, 13}},
		{"0-15:4/4", 0, span(0, 15)},
		{"2-9:1/3", 0, []int{2, 5, 8}},
		{"100-200:2/25", 0, []int{100, 101, 125, 126, 150, 151, 175, 176, 200}},
		{"16-N", 32, span(16, 31)},
		{"N", 4, []int{3}},
		{"N-N", 4, []int{3}},
		{"all", 4, span(0, 3)},
		{"all:1/2", 8, []int{0, 2, 4, 6}},
		{"63", 64, []int{63}},
		{"65535", 0, []int{65535}},
	}
	for _, tt := range tests {
		got, err := ParseList(tt.in, tt.nr)
		if err != nil {
			t.Errorf("ParseList(%q, %d): %v", tt.in, tt.nr, err)
			continue
		}
		if !slices.Equal(got.CPUs(), tt.want) {
			t.Errorf("ParseList(%q, %d) = %v, want %v", tt.in, tt.nr, got.CPUs(), tt.want)
		}
	}
}

func TestParseListErrors(t *testing.T) {
	tests := []struct {
		in   string
		nr   int
		want error
	}{
		{"3-1", 0, ErrSyntax},
		{"a", 0, ErrSyntax},
		{"1,,2", 0, ErrSyntax},
		{",1", 0, ErrSyntax},
		{"1,", 0, ErrSyntax},
		{"1-", 0, ErrSyntax},
		{"-1", 0, ErrSyntax},
		{"1-2-3", 0, ErrSyntax},
		{"+1", 0, ErrSyntax},
		{"0-3:0/4", 0, ErrSyntax},
		{"0-3:5/4", 0, ErrSyntax},
		{"0-3:2", 0, ErrSyntax},
		{"0-3:/4", 0, ErrSyntax},
		{"0-3:2/", 0, ErrSyntax},
		{" 1", 0, ErrSyntax},
		{"0, 1", 0, ErrSyntax},
		{"0 -3", 0, ErrSyntax},
		{"0-3\n,4", 0, ErrSyntax},
		{"N", 0, ErrSyntax},
		{"all", 0, ErrSyntax},
		{"0-N", 0, ErrSyntax},
		{"n", 8, ErrSyntax},
		{"ALL", 8, ErrSyntax},
		{"64", 64, ErrRange},
		{"0-64", 64, ErrRange},
		{"65536", 0, ErrRange},
		{"99999999999999999999", 0, ErrRange},
		{"0-3:1/99999999999", 0, ErrRange},
		{"all", 1 << 20, ErrRange},
	}
	for _, tt := range tests {
		got, err := ParseList(tt.in, tt.nr)
		if err == nil {
			t.Errorf("ParseList(%q, %d) = %v, want error", tt.in, tt.nr, got)
			continue
		}
		if !errors.Is(err, tt.want) {
			t.Errorf("ParseList(%q, %d) error %q does not wrap %v", tt.in, tt.nr, err, tt.want)
		}
		if !strings.Contains(err.Error(), strconv.Quote(tt.in)) {
			t.Errorf("ParseList(%q, %d) error %q does not name the input", tt.in, tt.nr, err)
		}
		if !strings.Contains(err.Error(), "valid: ") {
			t.Errorf("ParseList(%q, %d) error %q does not say what is valid", tt.in, tt.nr, err)
		}
	}
}

func TestParseListErrorMessage(t *testing.T) {
	_, err := ParseList("3-1", 0)
	want := `parse cpu list "3-1": range start 3 > end 1 (valid: "0", "0-3,8-11", "0-15:2/4", "N", "all")`
	if err == nil || err.Error() != want {
		t.Errorf("ParseList(\"3-1\") error = %v, want %s", err, want)
	}
	_, err = ParseList("0-3,64", 64)
	want = `parse cpu list "0-3,64": item "64": cpu 64 >= CPU count 64 (valid: 0-63)`
	if err == nil || err.Error() != want {
		t.Errorf("ParseList(\"0-3,64\", 64) error = %v, want %s", err, want)
	}
}

func TestMustParseList(t *testing.T) {
	if got := MustParseList("0-2,5"); !got.Equal(Of(0, 1, 2, 5)) {
		t.Errorf("MustParseList = %v", got)
	}
	defer func() {
		if recover() == nil {
			t.Error("MustParseList(\"N\") did not panic")
		}
	}()
	MustParseList("N")
}

func TestParseMask(t *testing.T) {
	tests := []struct {
		in   string
		want []int
	}{
		{"0", nil},
		{"00000000,00000000", nil},
		{"f", span(0, 3)},
		{"F\n", span(0, 3)},
		{"3", []int{0, 1}},
		{"10", []int{4}},
		{"0000000f", span(0, 3)},
		{"1,00000000", []int{32}},
		{"00000001,00000000", []int{32}},
		{"1,0", []int{32}},
		{"0x1ff", span(0, 8)},
		{"0X100000000", []int{32}},
		{"ff,ffffffff", span(0, 39)},
		{"ff,ffffc000,000fffff,fc000000", append(span(26, 51), span(78, 103)...)},
		{"00000010,00000000,00000000,00000000", []int{100}},
		{"ffffffff,ffffffff,00000000,00000000", span(64, 127)},
		{"00000000,00000000,000f0000,00000000,0000000f", []int{0, 1, 2, 3, 80, 81, 82, 83}},
		// 0xdeadbeef = 1101 1110 1010 1101 1011 1110 1110 1111
		{"DeadBeef", []int{0, 1, 2, 3, 5, 6, 7, 9, 10, 11, 12, 13, 15, 16, 18, 19, 21, 23, 25, 26, 27, 28, 30, 31}},
	}
	for _, tt := range tests {
		got, err := ParseMask(tt.in)
		if err != nil {
			t.Errorf("ParseMask(%q): %v", tt.in, err)
			continue
		}
		if !slices.Equal(got.CPUs(), tt.want) {
			t.Errorf("ParseMask(%q) = %v, want %v", tt.in, got.CPUs(), tt.want)
		}
		if back, err := ParseMask(got.Mask(0)); err != nil || !back.Equal(got) {
			t.Errorf("ParseMask(%q).Mask(0) = %q does not round-trip: %v, %v", tt.in, got.Mask(0), back, err)
		}
	}
}

func TestParseMaskErrors(t *testing.T) {
	for _, in := range []string{
		"", "\n", "xyz", "1,,2", ",1", "1,", "123456789", "0x", "0x1,00000000",
		"-1", " f", "f f", "1_0", "g", strings.Repeat("0,", maxCPUs/32) + "1",
		"0x" + strings.Repeat("0", maxCPUs/4+1),
	} {
		got, err := ParseMask(in)
		if err == nil {
			t.Errorf("ParseMask(%q) = %v, want error", in, got)
			continue
		}
		if !errors.Is(err, ErrSyntax) {
			t.Errorf("ParseMask(%q) error %q does not wrap ErrSyntax", in, err)
		}
		if !strings.Contains(err.Error(), strconv.Quote(in)) {
			t.Errorf("ParseMask(%q) error %q does not name the input", in, err)
		}
	}
}

func TestMask(t *testing.T) {
	tests := []struct {
		set  Set
		nr   int
		want string
	}{
		{Of(0, 1), 2, "3"},
		{Of(), 2, "0"},
		{Of(), 0, "0"},
		{Of(), -5, "0"},
		{Of(0, 1, 2, 3), 4, "f"},
		{Of(4), 8, "10"},
		{Of(0, 1, 2, 3), 32, "0000000f"},
		{Of(32), 36, "1,00000000"},
		{Of(32), 64, "00000001,00000000"},
		{Of(100), 128, "00000010,00000000,00000000,00000000"},
		{Of(span(64, 127)...), 128, "ffffffff,ffffffff,00000000,00000000"},
		{Of(0, 1, 2, 3, 80, 81, 82, 83), 160, "00000000,00000000,000f0000,00000000,0000000f"},
		{Of(append(span(26, 51), span(78, 103)...)...), 104, "ff,ffffc000,000fffff,fc000000"},
		{Of(5), 0, "20"},          // widened to Max()+1 = 6 bits
		{Of(32), 8, "1,00000000"}, // widened to 33 bits
		{Of(31), 0, "80000000"},
		{Of(0), 33, "0,00000001"},
	}
	for _, tt := range tests {
		if got := tt.set.Mask(tt.nr); got != tt.want {
			t.Errorf("%v.Mask(%d) = %q, want %q", tt.set, tt.nr, got, tt.want)
		}
		// Kernel-formatted masks reproduce exactly.
		if tt.nr > tt.set.Max() {
			if got, err := ParseMask(tt.want); err != nil || got.Mask(tt.nr) != tt.want {
				t.Errorf("ParseMask(%q).Mask(%d) = %q, %v", tt.want, tt.nr, got.Mask(tt.nr), err)
			}
		}
	}
}

func TestString(t *testing.T) {
	tests := []struct {
		set  Set
		want string
	}{
		{Set{}, ""},
		{Of(3), "3"},
		{Of(0, 1), "0-1"},
		{Of(0, 2), "0,2"},
		{Of(0, 1, 2, 3, 8, 9, 10, 11), "0-3,8-11"},
		{Of(11, 10, 9, 8, 3, 2, 1, 0, 0), "0-3,8-11"},
		{Of(0, 1, 2, 3, 8), "0-3,8"},
		{Of(63, 64), "63-64"},
		{Of(span(0, 200)...), "0-200"},
	}
	for _, tt := range tests {
		if got := tt.set.String(); got != tt.want {
			t.Errorf("String(%v) = %q, want %q", tt.set.CPUs(), got, tt.want)
		}
	}
}

// sampleSets is a spread of sets used by the round-trip and algebra tests.
func sampleSets() []Set {
	sets := []Set{
		{}, Of(0), Of(1), Of(31), Of(32), Of(63), Of(64), Of(100), Of(maxCPUs - 1),
		Of(0, 1), Of(0, 2), Of(span(0, 63)...), Of(span(0, 64)...), Of(span(64, 127)...),
		MustParseList("0-15:2/4"), MustParseList("0-3,8-11"), MustParseList("1-1000:3/7,4000"),
	}
	for seed := uint32(1); seed < 40; seed++ {
		var cpus []int
		x := seed * 2654435761
		for range seed % 17 {
			x ^= x << 13
			x ^= x >> 17
			x ^= x << 5
			cpus = append(cpus, int(x%300))
		}
		sets = append(sets, Of(cpus...))
	}
	return sets
}

func TestRoundTrip(t *testing.T) {
	for _, s := range sampleSets() {
		if got, err := ParseList(s.String(), 0); err != nil || !got.Equal(s) {
			t.Errorf("ParseList(%q) = %v, %v; want %v", s.String(), got, err, s)
		}
		if got, err := ParseList(s.String(), s.Max()+1); err != nil || !got.Equal(s) {
			t.Errorf("ParseList(%q, %d) = %v, %v; want %v", s.String(), s.Max()+1, got, err, s)
		}
		for _, n := range []int{0, 1, s.Max() + 1, min(s.Max()+2, maxCPUs), 32, 64, 100, 128, 160, 4096} {
			m := s.Mask(n)
			if got, err := ParseMask(m); err != nil || !got.Equal(s) {
				t.Errorf("ParseMask(%v.Mask(%d) = %q) = %v, %v", s, n, m, got, err)
			}
		}
	}
}

func TestAccessors(t *testing.T) {
	s := Of(3, 1, 64, 3)
	if got := s.CPUs(); !slices.Equal(got, []int{1, 3, 64}) {
		t.Errorf("CPUs = %v", got)
	}
	s.CPUs()[0] = 99 // must not alias internal state
	if !s.Contains(1) || s.Contains(99) {
		t.Error("CPUs returned an aliased slice")
	}
	if s.Len() != 3 || s.Max() != 64 || s.IsEmpty() {
		t.Errorf("Len/Max/IsEmpty = %d/%d/%v", s.Len(), s.Max(), s.IsEmpty())
	}
	for _, c := range []int{-1, 0, 2, 63, 65, 1 << 40} {
		if s.Contains(c) {
			t.Errorf("Contains(%d) = true", c)
		}
	}
	var zero Set
	if !zero.IsEmpty() || zero.Len() != 0 || zero.Max() != -1 || zero.String() != "" || len(zero.CPUs()) != 0 {
		t.Error("zero Set is not empty")
	}
	if !Of().Equal(zero) || !MustParseList("").Equal(zero) || !Of(5).Difference(Of(5)).Equal(zero) {
		t.Error("empty sets differ")
	}
	for _, bad := range []int{-1, maxCPUs} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Of(%d) did not panic", bad)
				}
			}()
			Of(bad)
		}()
	}
}

func TestAlgebra(t *testing.T) {
	sets := sampleSets()
	for _, a := range sets {
		for _, b := range sets {
			u, i, d := a.Union(b), a.Intersect(b), a.Difference(b)
			for c := range 300 {
				ina, inb := a.Contains(c), b.Contains(c)
				if u.Contains(c) != (ina || inb) || i.Contains(c) != (ina && inb) || d.Contains(c) != (ina && !inb) {
					t.Fatalf("%v op %v wrong at cpu %d: union %v, intersect %v, difference %v", a, b, c, u, i, d)
				}
			}
			if !u.Equal(b.Union(a)) || !i.Equal(b.Intersect(a)) {
				t.Errorf("union/intersect of %v and %v not commutative", a, b)
			}
			if !a.IsSubsetOf(u) || !i.IsSubsetOf(a) || !d.IsSubsetOf(a) || !d.Intersect(b).IsEmpty() {
				t.Errorf("subset laws fail for %v and %v", a, b)
			}
			if a.IsSubsetOf(b) != a.Difference(b).IsEmpty() {
				t.Errorf("%v.IsSubsetOf(%v) = %v", a, b, a.IsSubsetOf(b))
			}
			if a.Equal(b) != (a.IsSubsetOf(b) && b.IsSubsetOf(a)) {
				t.Errorf("%v.Equal(%v) = %v", a, b, a.Equal(b))
			}
			if u.Len() != a.Len()+b.Len()-i.Len() {
				t.Errorf("|%v ∪ %v| = %d", a, b, u.Len())
			}
		}
	}
	// Operations leave their operands untouched.
	a, b := Of(1, 2, 3), Of(3, 4)
	a.Union(b)
	a.Intersect(b)
	a.Difference(b)
	if a.String() != "1-3" || b.String() != "3-4" {
		t.Errorf("operands modified: %v %v", a, b)
	}
}

func TestMarshalJSON(t *testing.T) {
	type wrap struct {
		CPUs Set `json:"cpus"`
	}
	for _, tt := range []struct {
		set  Set
		want string
	}{
		{Set{}, `{"cpus":[]}`},
		{Of(0, 1, 2, 3, 8), `{"cpus":[0,1,2,3,8]}`},
		{Of(65535), `{"cpus":[65535]}`},
	} {
		got, err := json.Marshal(wrap{tt.set})
		if err != nil || string(got) != tt.want {
			t.Errorf("json.Marshal(%v) = %s, %v; want %s", tt.set, got, err, tt.want)
		}
	}
}
