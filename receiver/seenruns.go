package receiver

import "math"

// rangeList is a sorted list of disjoint, non-adjacent inclusive ranges
// of seen sequences, added in any order, at most limit long: when an add
// makes it longer, the highest range is dropped and cut becomes its
// start, so the list is exact below cut and ignores what is at or above.
// The gaps between its ranges below cut are then exact missing ranges.
type rangeList struct {
	r     [][2]uint64
	limit int
	cut   uint64 // math.MaxUint64 while nothing was dropped
}

// seenSlack is how many seen runs a window's list holds beyond the
// maxRanges+1 that bound a report's gaps: runs that are apart only for
// a while, because the rings evict the words between them in another
// order (one run per ring's frontier, or per word where every ring
// carries every other packet), must not push the cut below the gaps a
// report lists. The list is at most (maxRanges + 1 + seenSlack) × 16
// bytes per stream, and only as long as the stream's loss makes it.
const seenSlack = 64

func newRangeList(maxRanges int) rangeList {
	return rangeList{limit: maxRanges + 1 + seenSlack, cut: math.MaxUint64}
}

// add adds [from, to], merging it with the ranges it overlaps or touches.
func (r *rangeList) add(from, to uint64) {
	if from >= r.cut {
		return
	}
	to = min(to, r.cut-1)
	n := len(r.r)
	if n > 0 && r.r[n-1][1] < from && r.r[n-1][1]+1 >= from { // in order: the common case
		r.r[n-1][1] = to
		return
	}
	// i: the first range that ends at or after from-1 (could merge).
	lo, hi := 0, n
	for lo < hi {
		m := (lo + hi) / 2
		if r.r[m][1]+1 < from {
			lo = m + 1
		} else {
			hi = m
		}
	}
	i, j := lo, lo
	for j < n && r.r[j][0] <= to+1 {
		from, to = min(from, r.r[j][0]), max(to, r.r[j][1])
		j++
	}
	if i == j {
		r.r = append(r.r, [2]uint64{})
		copy(r.r[i+1:], r.r[i:])
	} else {
		r.r = append(r.r[:i+1], r.r[j:]...)
	}
	r.r[i] = [2]uint64{from, to}
	if len(r.r) > r.limit {
		r.cut = r.r[len(r.r)-1][0]
		r.r = r.r[:len(r.r)-1]
	}
}

// gaps appends to out the runs in [1, end) that r's ranges do not cover
// (sequence 0 is outside the numbering), up to limit in all.
func (r *rangeList) gaps(out [][2]uint64, end uint64, limit int) [][2]uint64 {
	next := uint64(1) // the lowest sequence not yet covered or listed
	for _, s := range r.r {
		if s[0] >= end || len(out) >= limit {
			break
		}
		if s[0] > next {
			out = append(out, [2]uint64{next, s[0] - 1})
		}
		next = max(next, s[1]+1)
	}
	if next < end && len(out) < limit {
		out = append(out, [2]uint64{next, end - 1})
	}
	return out
}
