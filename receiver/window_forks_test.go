package receiver

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
)

// ranges is the unbounded's first limit missing runs in [1, max].
func (o *unbounded) ranges(limit int) [][2]uint64 {
	seen := make([]uint64, 0, len(o.seen))
	for s := range o.seen {
		seen = append(seen, s)
	}
	slices.Sort(seen)
	out := [][2]uint64{}
	next := uint64(1)
	for _, s := range seen {
		if len(out) == limit {
			break
		}
		if s > next {
			out = append(out, [2]uint64{next, s - 1})
		}
		next = s + 1
	}
	return out
}

// check compares table tab's one stream with o: every counter, the
// first limit missing ranges, nothing late.
func (o *unbounded) check(t *testing.T, what string, tab *Table, limit int) {
	t.Helper()
	got, _, _ := tab.counts(true, limit)
	if len(got) != 1 {
		t.Fatalf("%s: %d streams", what, len(got))
	}
	g := got[0]
	if g.Received != o.received || g.Duplicates != o.dups || g.MaxSeq != o.max || g.Missing != o.missing() || g.Late != 0 {
		t.Errorf("%s: received %d dups %d max %d missing %d late %d; want %d %d %d %d 0",
			what, g.Received, g.Duplicates, g.MaxSeq, g.Missing, g.Late, o.received, o.dups, o.max, o.missing())
	}
	if want := o.ranges(limit); !slices.Equal(g.MissingRanges, want) || g.MissingRangesFrom != 0 {
		t.Errorf("%s: ranges %v from %d, want %v", what, g.MissingRanges, g.MissingRangesFrom, want)
	}
}

// TestWindowFreshForkPastWrap: a fork (an AF_PACKET ring) that first
// sees a stream after 2^32, then after 2^33, of its sequences (an RSS
// move mid-run) counts it on the stream's lap: nothing late, missing and
// the ranges exact. The stream gets there in jumps of 2^29 (losses),
// each followed by a window's worth of sequences (a slot whose word is
// more than 2^31 words old, which only a loss that long leaves, would
// take newer words for older: the tags are 32 bits).
func TestWindowFreshForkPastWrap(t *testing.T) {
	for _, repeats := range []int{1, 2} {
		t.Run(fmt.Sprintf("repeats %d", repeats), func(t *testing.T) {
			o := mustOptions(t, Options{Window: MinWindow, Repeats: repeats})
			base := newTable(o)
			unb := &unbounded{seen: map[uint64]int{}, repeats: repeats}
			send := func(f *Table, seqs ...uint64) {
				for _, s := range seqs {
					for range repeats {
						unb.add(s)
						f.Add(testFrame{seq: uint32(s)}.bytes())
					}
				}
			}
			first := base.Fork()
			send(first, span(1, 3000)...)
			forks := []*Table{first}
			for lap := uint64(1); lap <= 2; lap++ {
				for s := (lap-1)<<32 + 1<<29; s < lap<<32; s += 1 << 29 {
					send(first, span(s, s+MinWindow)...) // a window's worth: every slot moves on
				}
				send(first, span(lap<<32, lap<<32+1000)...)
				fresh := base.Fork() // first sees the stream here
				send(fresh, span(lap<<32+1001, lap<<32+3000)...)
				send(first, lap<<32+3001)
				send(fresh, lap<<32+3003, lap<<32+3002, lap<<32+3002) // reordered, a duplicate
				got, _, _ := fresh.counts(false, 0)
				if got[0].Late != 0 || got[0].MaxSeq != lap<<32+3003 || got[0].Reordered != 1 {
					t.Errorf("fork first seeing the stream at 2^32×%d: %+v", lap, got[0])
				}
				forks = append(forks, fresh)
			}
			for _, f := range forks {
				base.Merge(f)
			}
			unb.check(t, "merged", base, o.MaxRanges)
		})
	}
}

// TestWindowConcurrentForks: four goroutines, each with its fork of one
// table, count one stream's packets at once (run it with -race): each
// packet goes to one of them, its duplicates to others, with loss,
// reordering within a quarter of the window, bursts longer than the
// window and two 32-bit wraps; the merged counts and ranges match
// unbounded accounting exactly. The goroutines count in rounds (a
// barrier between), each round's sequences within a few hundred of each
// other, as rings of one interface are.
func TestWindowConcurrentForks(t *testing.T) {
	const (
		workers = 4
		rounds  = 400
	)
	for _, repeats := range []int{1, 3} {
		t.Run(fmt.Sprintf("repeats %d", repeats), func(t *testing.T) {
			r := rand.New(rand.NewPCG(7, uint64(repeats)))
			o := mustOptions(t, Options{Window: MinWindow, Repeats: repeats, MaxRanges: 8})
			base := newTable(o)
			forks := make([]*Table, workers)
			for i := range forks {
				forks[i] = base.Fork()
			}
			unb := &unbounded{seen: map[uint64]int{}, repeats: repeats}
			// plan[round][worker] is the sequences a worker counts in a round.
			var plan [][workers][]uint32
			send := func(round *[workers][]uint32, s uint64, w, copies int) {
				for c := range copies {
					unb.add(s)
					round[(w+c)%workers] = append(round[(w+c)%workers], uint32(s))
				}
			}
			next := uint64(1)
			span := uint64(MinWindow / 4)
			// roundOf is the next 100 sequences' packets.
			roundOf := func() [workers][]uint32 {
				var p [workers][]uint32
				start := next
				for range 100 {
					var s uint64
					switch x := r.IntN(100); {
					case x < 5: // lost
						next++
						continue
					case x < 15 && next > start+span: // reordered, inside the round
						s = next - 1 - uint64(r.IntN(int(span)))
					default:
						s = next
						next++
					}
					copies := repeats
					if r.IntN(10) == 0 {
						copies++ // one beyond the expected: a duplicate, on another worker
					}
					send(&p, s, r.IntN(workers), copies)
				}
				return p
			}
			for round := range rounds {
				switch {
				case round == rounds/3 || round == 2*rounds/3:
					// To the next 2^32 in jumps of 2^29 (a loss of nearly
					// 2^32), each followed by twelve rounds (more than a
					// window's worth of sequences).
					lap := (next>>32 + 1) << 32
					for next += 1 << 29; next < lap; next += 1 << 29 {
						for range 12 {
							plan = append(plan, roundOf())
						}
					}
				case r.IntN(20) == 0: // a loss burst longer than the window
					next += 3 * MinWindow
				}
				plan = append(plan, roundOf())
			}
			frames := make([][]byte, workers)
			for i := range frames {
				frames[i] = testFrame{}.bytes()
			}
			var round sync.WaitGroup
			for _, p := range plan {
				for w := range workers {
					round.Add(1)
					go func() {
						defer round.Done()
						for _, s := range p[w] {
							putSeq(frames[w][seqOffTest:], s)
							forks[w].Add(frames[w])
						}
					}()
				}
				round.Wait()
			}
			for _, f := range forks {
				base.Merge(f)
			}
			if unb.max < 2<<32 {
				t.Fatalf("the stream reached only %d: not past 2^33", unb.max)
			}
			unb.check(t, "merged", base, o.MaxRanges)
		})
	}
}

// seqOffTest is where testFrame{} holds its sequence (untagged IPv4).
const seqOffTest = 14 + 20 + 8 + 4
