package receiver

import (
	"math"
	"slices"
	"testing"
)

// A rangeList merges what touches, keeps its limit by dropping the
// highest run (its start becomes the cut, above which adds are ignored),
// and its gaps below the cut are the missing runs.
func TestRangeList(t *testing.T) {
	r := rangeList{limit: 3, cut: math.MaxUint64}
	for _, a := range [][2]uint64{{10, 19}, {30, 39}, {20, 25}, {50, 59}, {40, 40}} {
		r.add(a[0], a[1])
	}
	if want := [][2]uint64{{10, 25}, {30, 40}, {50, 59}}; !slices.Equal(r.r, want) || r.cut != math.MaxUint64 {
		t.Fatalf("merged: %v cut %d, want %v", r.r, r.cut, want)
	}
	r.add(1, 5) // a fourth run: the highest goes, the cut is its start
	if want := [][2]uint64{{1, 5}, {10, 25}, {30, 40}}; !slices.Equal(r.r, want) || r.cut != 50 {
		t.Fatalf("over the limit: %v cut %d, want %v cut 50", r.r, r.cut, want)
	}
	r.add(45, 70) // clipped at the cut
	r.add(60, 70) // above it: ignored
	if want := [][2]uint64{{1, 5}, {10, 25}, {30, 40}, {45, 49}}; len(r.r) != 3 || !slices.Equal(r.r, want[:3]) || r.cut != 45 {
		t.Fatalf("at the cut: %v cut %d", r.r, r.cut)
	}
	if got, want := r.gaps(nil, r.cut, 10), [][2]uint64{{6, 9}, {26, 29}, {41, 44}}; !slices.Equal(got, want) {
		t.Errorf("gaps below the cut %v, want %v", got, want)
	}
	if got, want := r.gaps(nil, r.cut, 2), [][2]uint64{{6, 9}, {26, 29}}; !slices.Equal(got, want) {
		t.Errorf("the first two gaps %v, want %v", got, want)
	}
	head := rangeList{limit: 3, cut: math.MaxUint64}
	head.add(5, 9)
	if got, want := head.gaps(nil, 20, 10), [][2]uint64{{1, 4}, {10, 19}}; !slices.Equal(got, want) {
		t.Errorf("head and tail gaps %v, want %v", got, want)
	}
}
