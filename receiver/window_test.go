package receiver

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
)

// wires are 64-bit sequences as pktgen sends them: their low 32 bits.
func wires(ss ...uint64) []uint32 {
	out := make([]uint32, len(ss))
	for i, s := range ss {
		out[i] = uint32(s)
	}
	return out
}

// span is from..to inclusive, 64-bit.
func span(from, to uint64) []uint64 {
	var s []uint64
	for i := from; i <= to; i++ {
		s = append(s, i)
	}
	return s
}

// windowFrom is the lowest sequence a window of n sequences (shift: 5
// for bits, 1 for counters) still holds when the highest is top.
func windowFrom(n uint64, shift uint, top uint64) uint64 {
	words := n >> shift
	if top>>shift < words {
		return 0
	}
	return (top>>shift - words + 1) << shift
}

// windowCases are the sliding window's cases, run by TestTable and
// against the XDP program (TestXDPProgramMatchesTable): a window of
// MinWindow sequences (32 words).
func windowCases() []tableCase {
	w := Options{Window: MinWindow}
	sr := func(received, maxSeq, dups, reordered, late, missing uint64, from uint64, ranges ...[2]uint64) StreamReport {
		if ranges == nil {
			ranges = [][2]uint64{}
		}
		return StreamReport{Src: addrA, Dst: addrB, DstPort: 9, Received: received, MaxSeq: maxSeq,
			Duplicates: dups, Reordered: reordered, Late: late, Missing: missing, MissingRanges: ranges, MissingRangesFrom: from}
	}
	const two32 = uint64(1) << 32
	var wrap []uint64
	wrap = append(wrap, span(two32-1000, two32+1000)...)
	for k := uint64(1); k <= 7; k++ {
		wrap = append(wrap, two32+k<<29)
	}
	second := span(two32*2-1000, two32*2+1000)
	second[1003], second[1004] = second[1004], second[1003] // 2^33+4 before 2^33+3: reordered
	wrap = append(wrap, second...)
	wrap = append(wrap, two32*2+5, two32*2+5) // duplicates after the second wrap
	uniq := uint64(2001 + 7 + 2001)
	repeated := func(from, to uint32, n int) []uint32 {
		var s []uint32
		for q := from; q <= to; q++ {
			for range n {
				s = append(s, q)
			}
		}
		return s
	}
	return []tableCase{
		{name: "window slides", opts: w, frames: streamFrames(testFrame{}, rng(1, 20000)),
			want: []StreamReport{sr(20000, 20000, 0, 0, 0, 0, windowFrom(MinWindow, 5, 20000))}},
		{name: "duplicate in the window, late out of it", opts: w, frames: streamFrames(testFrame{}, cat(rng(1, 5000), []uint32{10, 4990})),
			want: []StreamReport{sr(5002, 5000, 1, 0, 1, 0, windowFrom(MinWindow, 5, 5000))}},
		{name: "a lost sequence arriving late stays missing", opts: w, frames: streamFrames(testFrame{}, cat(seqs(1, 5000, 100), []uint32{100})),
			want: []StreamReport{sr(5000, 5000, 0, 0, 1, 1, windowFrom(MinWindow, 5, 5000))}},
		{name: "reorder in the window", opts: w, frames: streamFrames(testFrame{}, cat(rng(1, 10), rng(12, 500), []uint32{11})),
			want: []StreamReport{sr(500, 500, 0, 1, 0, 0, 0)}},
		{name: "eviction: gaps in the window listed", opts: w, frames: streamFrames(testFrame{}, cat(rng(1, 3000), rng(3010, 3500), rng(3600, 4000))),
			want: []StreamReport{sr(3892, 4000, 0, 0, 0, 108, windowFrom(MinWindow, 5, 4000), [2]uint64{3008, 3009}, [2]uint64{3501, 3599})}},
		{name: "loss burst longer than the window", opts: w, frames: streamFrames(testFrame{}, cat(rng(1, 1000), rng(100001, 101000), []uint32{500})),
			want: []StreamReport{sr(2001, 101000, 0, 0, 1, 99000, 100000, [2]uint64{100000, 100000})}},
		{name: "32-bit wrap twice", opts: w, frames: streamFrames(testFrame{}, wires(wrap...)),
			want: []StreamReport{sr(uniq+2, two32*2+1000, 2, 1, 0, two32*2+1000-uniq, windowFrom(MinWindow, 5, two32*2+1000))}},
		{name: "repeats through the window", opts: Options{Window: MinWindow, Repeats: 3}, frames: streamFrames(testFrame{}, cat(repeated(1, 5000, 3), []uint32{4999, 2})),
			want: []StreamReport{sr(15002, 5000, 1, 0, 1, 0, windowFrom(MinWindow, 1, 5000))}},
		{name: "repeats: lost copies are not missing, lost sequences are", opts: Options{Window: MinWindow, Repeats: 2},
			frames: streamFrames(testFrame{}, cat(repeated(1, 10, 2), []uint32{11}, repeated(13, 20, 2))),
			want:   []StreamReport{sr(37, 20, 0, 0, 0, 1, 0, [2]uint64{12, 12})}},
	}
}

// unbounded counts one stream with unbounded memory: what the window must
// match while a stream's disorder stays inside it.
type unbounded struct {
	seen     map[uint64]int
	received uint64
	dups     uint64
	max      uint64
	repeats  int
}

func (o *unbounded) add(s uint64) {
	o.received++
	if o.seen[s] >= o.repeats {
		o.dups++
		return
	}
	o.seen[s]++
	o.max = max(o.max, s)
}

func (o *unbounded) missing() uint64 { return o.max - uint64(len(o.seen)) }

// TestWindowMatchesOracle: random streams whose reordering stays within
// half the window, with loss, duplicates and bursts of loss longer than
// the window, counted by one table and by three forks sharing its
// windows (as the AF_PACKET rings do), match unbounded accounting
// exactly (reordered, per table, aside), and nothing is late.
func TestWindowMatchesOracle(t *testing.T) {
	for _, repeats := range []int{1, 3} {
		for trial := range 20 {
			t.Run(fmt.Sprintf("repeats %d trial %d", repeats, trial), func(t *testing.T) {
				r := rand.New(rand.NewPCG(uint64(trial), uint64(repeats)))
				o := mustOptions(t, Options{Window: MinWindow, Repeats: repeats})
				span := uint64(MinWindow / 2)
				one := newTable(o)
				shared := newTable(o)
				forks := []*Table{shared.Fork(), shared.Fork(), shared.Fork()}
				unb := &unbounded{seen: map[uint64]int{}, repeats: repeats}
				start := uint64(1)
				if trial%3 == 0 {
					start = 1<<32 - 3000 // across the 32-bit wrap
				}
				next := start
				for range 30000 {
					var s uint64
					switch x := r.IntN(1000); {
					case x < 5: // loss burst longer than the window
						next += 3 * MinWindow
						continue
					case x < 50: // lost
						next++
						continue
					case x < 100 && next > start+span: // reordered or duplicated, inside the window
						s = next - 1 - uint64(r.IntN(int(span)))
					default:
						s = next
						next++
					}
					f := testFrame{seq: uint32(s)}.bytes()
					unb.add(s)
					one.Add(f)
					forks[r.IntN(len(forks))].Add(f)
				}
				for _, f := range forks {
					shared.Merge(f)
				}
				unbMissing := unb.missing() // head loss included: below start
				for name, tab := range map[string]*Table{"one table": one, "forks": shared} {
					got, _, _ := tab.counts(true, 4)
					if len(got) != 1 {
						t.Fatalf("%s: %d streams", name, len(got))
					}
					g := got[0]
					if g.Received != unb.received || g.Duplicates != unb.dups || g.MaxSeq != unb.max || g.Missing != unbMissing || g.Late != 0 {
						t.Errorf("%s: received %d dups %d max %d missing %d late %d; want %d %d %d %d 0",
							name, g.Received, g.Duplicates, g.MaxSeq, g.Missing, g.Late, unb.received, unb.dups, unb.max, unbMissing)
					}
				}
			})
		}
	}
}

// TestWindowRanges: the ranges listed from a window are the unbounded's
// missing runs at or above the window's lowest sequence.
func TestWindowRanges(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for trial := range 200 {
		o := mustOptions(t, Options{Window: MinWindow})
		tab := newTable(o)
		seen := map[uint64]bool{}
		top := uint64(1 + r.IntN(4000))
		density := r.Float64()
		for s := uint64(1); s <= top; s++ {
			if r.Float64() < density || s == top {
				seen[s] = true
				tab.Add(testFrame{seq: uint32(s)}.bytes())
			}
		}
		limit := 1 + r.IntN(20)
		got, _, _ := tab.counts(true, limit)
		from := max(windowFrom(MinWindow, 5, top), 1)
		want := [][2]uint64{}
		open := false
		for s := from; s <= top; s++ {
			switch {
			case !seen[s] && !open:
				want = append(want, [2]uint64{s, s})
				open = true
			case !seen[s]:
				want[len(want)-1][1] = s
			default:
				open = false
			}
		}
		if len(want) > limit {
			want = want[:limit]
		}
		if !slices.Equal(got[0].MissingRanges, want) {
			t.Fatalf("trial %d top %d limit %d: ranges %v, want %v", trial, top, limit, got[0].MissingRanges, want)
		}
	}
}

// TestWindowMemoryFlat: a table's memory after 10^8 sequences of a
// stream is what it was after 10^6 (10^7 with -short).
func TestWindowMemoryFlat(t *testing.T) {
	n := uint64(100_000_000)
	if testing.Short() || raceEnabled {
		n = 10_000_000
	}
	tab := newTable(mustOptions(t, Options{}))
	f := testFrame{}.bytes()
	off := 14 + 20 + 8 + 4
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	var base uint64
	for s := uint64(1); s <= n; s++ {
		putSeq(f[off:], uint32(s))
		tab.Add(f)
		if s == 1_000_000 {
			base = heap()
		}
	}
	after := heap()
	if after > base+1<<20 {
		t.Errorf("heap grew from %d to %d bytes between 10^6 and %d sequences", base, after, n)
	}
	got, _, _ := tab.counts(false, 0)
	if got[0].Received != n || got[0].Missing != 0 || got[0].MaxSeq != n || uint64(len(tab.streams[0].words)) != DefaultWindow/32 {
		t.Errorf("after %d: %+v, window %d words", n, got[0], len(tab.streams[0].words))
	}
}

func putSeq(b []byte, s uint32) {
	b[0], b[1], b[2], b[3] = byte(s>>24), byte(s>>16), byte(s>>8), byte(s)
}

// TestWindowOptions: the window is a power of two within its limits.
func TestWindowOptions(t *testing.T) {
	for _, w := range []uint64{MinWindow - 1, MinWindow + 1, MaxWindow * 2, 3 << 20} {
		if _, err := (Options{Window: w}).withDefaults(); err == nil {
			t.Errorf("Window %d accepted", w)
		}
	}
	for _, tt := range []struct {
		o    Options
		want uint64
	}{
		{Options{}, DefaultMaxStreams * DefaultWindow / 4},
		{Options{Repeats: 2}, DefaultMaxStreams * DefaultRepeatWindow * 4},
		{Options{MaxStreams: 64, Window: 1 << 16}, 64 * 16 << 10},
	} {
		if got, err := tt.o.SeqStateBytes(); err != nil || got != tt.want {
			t.Errorf("%+v: %d bytes (%v), want %d", tt.o, got, err, tt.want)
		}
	}
}
