package receiver

import (
	"fmt"
	"math"
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

// windowCases are the sliding window's cases, run by TestTable and
// against the XDP program (TestXDPProgramMatchesTable): a window of
// MinWindow sequences (32 words), every missing range listed, those the
// window moved past included.
func windowCases() []tableCase {
	w := Options{Window: MinWindow}
	sr := func(received, maxSeq, dups, reordered, late, missing uint64, ranges ...[2]uint64) StreamReport {
		if ranges == nil {
			ranges = [][2]uint64{}
		}
		return StreamReport{Src: addrA, Dst: addrB, DstPort: 9, Received: received, MaxSeq: maxSeq,
			Duplicates: dups, Reordered: reordered, Late: late, Missing: missing, MissingRanges: ranges}
	}
	const two32 = uint64(1) << 32
	var wrap []uint64
	wrap = append(wrap, span(two32-1000, two32+1000)...)
	wrapRanges := [][2]uint64{{1, two32 - 1001}, {two32 + 1001, two32 + 1<<29 - 1}}
	for k := uint64(1); k <= 7; k++ {
		wrap = append(wrap, two32+k<<29)
		wrapRanges = append(wrapRanges, [2]uint64{two32 + k<<29 + 1, two32 + (k+1)<<29 - 1})
	}
	wrapRanges[len(wrapRanges)-1][1] = 2*two32 - 1001
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
	slides := sr(20000, 20000, 0, 0, 0, 0)
	dupLate := sr(5002, 5000, 1, 0, 1, 0)
	lostLate := sr(5000, 5000, 0, 0, 1, 1, [2]uint64{100, 100})
	evicted := sr(3892, 4000, 0, 0, 0, 108, [2]uint64{3001, 3009}, [2]uint64{3501, 3599})
	burst := sr(2001, 101000, 0, 0, 1, 99000, [2]uint64{1001, 100000})
	wrapped := sr(uniq+2, two32*2+1000, 2, 1, 0, two32*2+1000-uniq, wrapRanges...)
	repeats := sr(15002, 5000, 1, 0, 1, 0)
	return []tableCase{
		{name: "window slides", opts: w, frames: streamFrames(testFrame{}, rng(1, 20000)),
			want: []StreamReport{slides}},
		{name: "duplicate in the window, late out of it", opts: w, frames: streamFrames(testFrame{}, cat(rng(1, 5000), []uint32{10, 4990})),
			want: []StreamReport{dupLate}},
		{name: "a lost sequence arriving late stays missing", opts: w, frames: streamFrames(testFrame{}, cat(seqs(1, 5000, 100), []uint32{100})),
			want: []StreamReport{lostLate}},
		{name: "reorder in the window", opts: w, frames: streamFrames(testFrame{}, cat(rng(1, 10), rng(12, 500), []uint32{11})),
			want: []StreamReport{sr(500, 500, 0, 1, 0, 0)}},
		{name: "eviction: gaps listed, in and out of the window", opts: w, frames: streamFrames(testFrame{}, cat(rng(1, 3000), rng(3010, 3500), rng(3600, 4000))),
			want: []StreamReport{evicted}},
		{name: "loss burst longer than the window", opts: w, frames: streamFrames(testFrame{}, cat(rng(1, 1000), rng(100001, 101000), []uint32{500})),
			want: []StreamReport{burst}},
		{name: "32-bit wrap twice", opts: w, frames: streamFrames(testFrame{}, wires(wrap...)),
			want: []StreamReport{wrapped}},
		{name: "repeats through the window", opts: Options{Window: MinWindow, Repeats: 3}, frames: streamFrames(testFrame{}, cat(repeated(1, 5000, 3), []uint32{4999, 2})),
			want: []StreamReport{repeats}},
		{name: "repeats: lost copies are not missing, lost sequences are", opts: Options{Window: MinWindow, Repeats: 2},
			frames: streamFrames(testFrame{}, cat(repeated(1, 10, 2), []uint32{11}, repeated(13, 20, 2))),
			want:   []StreamReport{sr(37, 20, 0, 0, 0, 1, [2]uint64{12, 12})}},
		{name: "pktgen's stride: each built frame 4 times, its sequence 4 on", opts: Options{Window: MinWindow, Repeats: 4, SeqStride: 4},
			frames: streamFrames(testFrame{}, strided(1, 1000, 4, 501)),
			want:   []StreamReport{sr(3996, 1000, 0, 0, 0, 1, [2]uint64{501, 501})}},
		{name: "pktgen's stride across the 32-bit wrap", opts: Options{Window: MinWindow, Repeats: 4, SeqStride: 4},
			frames: streamFrames(testFrame{}, strided(1<<30-99, 1<<30+101, 4, 0)),
			want:   []StreamReport{sr(804, 1<<30+101, 0, 0, 0, 1<<30-100, [2]uint64{1, 1<<30 - 100})}},
		latencyBesideCopies(),
	}
}

// latencyBesideCopies is a round trip's latency stream (port 10,
// reflected) beside a load of 4 copies in steps of 4 (port 9), their
// frames interleaved: the latency stream numbers each probe once, 1 to
// 3000 (past the window: its words are evicted), and loses probes 5 and
// 2500 and repeats probe 7 (after 9). Counted in the load's steps, probes 5 to 8
// would be one sequence of 4 copies and neither the loss nor the
// duplicate would show; counted once per sequence, both do, exactly.
func latencyBesideCopies() tableCase {
	load := streamFrames(testFrame{}, strided(1, 600, 4, 300))
	probes := streamFrames(testFrame{port: 10}, cat(seqs(1, 9, 5), []uint32{7}, seqs(10, 3000, 2500)))
	var frames [][]byte
	for len(load) > 0 || len(probes) > 0 {
		n := min(len(load), 4)
		frames, load = append(frames, load[:n]...), load[n:]
		n = min(len(probes), 5)
		frames, probes = append(frames, probes[:n]...), probes[n:]
	}
	return tableCase{name: "a latency stream beside a load of 4 copies", opts: Options{Window: MinWindow, Repeats: 4, SeqStride: 4, Reflect: []uint16{10}},
		frames: frames,
		want: []StreamReport{
			{Src: addrA, Dst: addrB, DstPort: 9, Received: 599 * 4, MaxSeq: 600, Missing: 1, MissingRanges: [][2]uint64{{300, 300}}},
			{Src: addrA, Dst: addrB, DstPort: 10, Received: 2999, MaxSeq: 3000, Duplicates: 1, Missing: 2, MissingRanges: [][2]uint64{{5, 5}, {2500, 2500}}},
		}}
}

// strided are the wire sequences of built frames first to last (counted
// from 1) as kernel pktgen sends them with copies copies each: frame j
// carries 1+(j-1)·copies (its first copy's number; pktgen numbers every
// frame sent), copies times, the frame skip (0: none) not at all.
func strided(first, last uint64, copies int, skip uint64) []uint32 {
	var s []uint32
	for j := first; j <= last; j++ {
		if j == skip {
			continue
		}
		for range copies {
			s = append(s, uint32(1+(j-1)*uint64(copies)))
		}
	}
	return s
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
// the window, counted by one table and by forks sharing its windows (as
// the AF_PACKET rings do), match unbounded accounting exactly
// (reordered, per table, aside), missing ranges included, and nothing
// is late. A third of the streams start just below 2^32; another third
// get past 2^32 halfway, in jumps of 2^29 (each followed by a window's
// worth of sequences), after which a fourth fork, new to the stream,
// counts its share.
func TestWindowMatchesOracle(t *testing.T) {
	for _, repeats := range []int{1, 3} {
		for trial := range 21 {
			t.Run(fmt.Sprintf("repeats %d trial %d", repeats, trial), func(t *testing.T) {
				r := rand.New(rand.NewPCG(uint64(trial), uint64(repeats)))
				o := mustOptions(t, Options{Window: MinWindow, Repeats: repeats, MaxRanges: 6})
				reorder := uint64(MinWindow / 2)
				one := newTable(o)
				shared := newTable(o)
				forks := []*Table{shared.Fork(), shared.Fork(), shared.Fork()}
				unb := &unbounded{seen: map[uint64]int{}, repeats: repeats}
				start := uint64(1)
				if trial%3 == 0 {
					start = 1<<32 - 3000 // across the 32-bit wrap
				}
				next := start
				send := func(s uint64, f *Table) {
					b := testFrame{seq: uint32(s)}.bytes()
					unb.add(s)
					one.Add(b)
					f.Add(b)
				}
				for i := range 30000 {
					if trial%3 == 1 && i == 15000 { // past 2^32; then a fork new to the stream
						// Each jump passes a window's worth of sequences, as a
						// stream does: no slot keeps a word 2^31 words old.
						for next += 1 << 29; next < 1<<32+1000; next += 1 << 29 {
							for _, s := range span(next, next+MinWindow) {
								send(s, forks[r.IntN(len(forks))])
							}
						}
						forks = append(forks, shared.Fork())
						start = next
					}
					var s uint64
					switch x := r.IntN(1000); {
					case x < 5: // loss burst longer than the window
						next += 3 * MinWindow
						continue
					case x < 50: // lost
						next++
						continue
					case x < 100 && next > start+reorder: // reordered or duplicated, inside the window
						s = next - 1 - uint64(r.IntN(int(reorder)))
					default:
						s = next
						next++
					}
					send(s, forks[r.IntN(len(forks))])
				}
				for _, f := range forks {
					shared.Merge(f)
				}
				if trial%3 == 1 {
					if got, _, _ := forks[3].counts(false, 0); got[0].Received == 0 || got[0].Late != 0 {
						t.Errorf("the fork new past 2^32: %+v", got[0])
					}
				}
				unb.check(t, "one table", one, o.MaxRanges)
				unb.check(t, "forks", shared, o.MaxRanges)
			})
		}
	}
}

// TestWindowRanges: the ranges a table lists are the unbounded's first
// missing runs, those the window moved past included (random loss, and
// bursts longer than the window), also when the stream has more seen
// runs than a window's list holds (MaxRanges + 1 + seenSlack).
func TestWindowRanges(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	cut := 0 // trials whose seen runs were more than a window's list holds
	for trial := range 200 {
		limit := 1 + r.IntN(20)
		o := mustOptions(t, Options{Window: MinWindow, MaxRanges: limit})
		tab := newTable(o)
		seen := map[uint64]bool{}
		top := uint64(1 + r.IntN(40000))
		density := r.Float64()
		for s := uint64(1); s <= top; s++ {
			if r.IntN(5000) == 0 { // a loss burst, up to five windows long
				s = min(s+uint64(r.IntN(5*MinWindow)), top)
			}
			if r.Float64() < density || s == top {
				seen[s] = true
				tab.Add(testFrame{seq: uint32(s)}.bytes())
			}
		}
		got, _, _ := tab.counts(true, limit)
		if tab.streams[0].win.seen.cut != math.MaxUint64 {
			cut++
		}
		want := [][2]uint64{}
		open := false
		for s := uint64(1); s <= top; s++ {
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
	if cut < 20 {
		t.Errorf("only %d of 200 trials had more seen runs than the list holds: its bound is hardly tested", cut)
	}
	t.Logf("%d of 200 trials past the list's bound", cut)
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
	if got[0].Received != n || got[0].Missing != 0 || got[0].MaxSeq != n || uint64(len(tab.streams[0].win.words)) != DefaultWindow/32 {
		t.Errorf("after %d: %+v, window %d words", n, got[0], len(tab.streams[0].win.words))
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
