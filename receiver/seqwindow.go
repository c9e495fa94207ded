package receiver

import (
	"math"
	"slices"
	"sync"
	"sync/atomic"
)

// A stream's sequence state is a window: a ring of N 64-bit words (N a
// power of two), the same in Go (the AF_PACKET method, one window per
// stream shared by all rings) and in the XDP program's BPF_F_MMAPABLE
// array (one window per slot, shared by all CPUs). Each word is
//
//	tag (32 bits: the word's absolute index, truncated) << 32 | lanes
//
// where the word with absolute index W holds the sequences W·S to
// W·S+S-1 in its lanes:
//
//   - Repeats == 1: S = 32, a lane is one bit: seen or not.
//   - Repeats > 1: S = 2, a lane is a 16-bit copy counter (saturating at
//     Repeats).
//
// Word W lives at slot W mod N. A packet whose word's tag equals the
// slot's tag updates its lane; one whose word is newer replaces the slot
// (evicts the older word: its sequences are final from then on); one
// whose word is older than the slot's tag is late: its sequence left the
// window, so whether it is a duplicate or a sequence already counted
// missing cannot be told. The update is a compare-and-swap of the whole
// word, so CPUs (rings) sharing a window count duplicates exactly.
//
// A zero word is an unused slot (a used word always has a lane set).
// Because N divides 2^(32-log2 S), every lap of a 32-bit wire sequence
// maps to the same slot. The wire sequence is unwrapped to 64 bits
// against the stream's head: a word index shared by every CPU (ring)
// that counts the stream, moved up to a recorded word whenever that word
// is more than headStep past it. The head is the stream's, not the CPU's
// (ring's) own highest sequence, so a CPU that first sees a stream after
// 2^32 of its sequences (an RSS or IRQ move mid-run) unwraps its packets
// to the stream's lap, not to the first; and it is written about once
// per headStep words, so CPUs only read it. (The slot's tag alone could
// not do it: it carries 32 bits of the word index, 2^37 sequences with
// Repeats == 1 but only 2^33 with Repeats > 1, and a CPU new to the
// stream has no 64-bit reference of its own.)
//
// Per stream the counters are received, unique (first copies), dups,
// late and max_seq (64-bit), so missing is max_seq - unique: exact,
// however long the run, without scanning anything. The tags are 32
// bits: a slot still holding a word 2^31 words older than the packet's
// (a loss of 2^36 sequences in one burst, 2^32 with Repeats > 1) would
// take the newer word for an older one.
//
// Missing ranges: when a word is evicted, the sequences it saw are
// recorded as runs in a bounded sorted list per stream (seenruns.go); a
// word that never reached its slot (a loss longer than the window) is
// simply never seen. At the end the words the window still holds add
// theirs, and the gaps between the runs are the missing ranges, complete
// from sequence 1 (exact below where the list's bound cut it). The
// AF_PACKET rings record in Go (evicted); the XDP program keeps a run of
// full words per CPU and slot and sends Go the rest through a ring
// buffer (xdpProgram), which Go records the same way; if the ring had no
// room for a record, the XDP ranges are those the window still holds,
// from missing_ranges_from.

// geometry is the shape of a stream's window and how its sequences are
// counted: every stream's the same, but for the latency streams of a
// round trip (Options.Reflect), counted once per sequence (geometry.once)
// in the same layout.
type geometry struct {
	shift   uint   // log2 of the sequences per word: 5 (bits) or 1 (two 16-bit counters)
	mask    uint64 // words per window - 1
	repeats uint64
	// stride is log2 of Options.SeqStride: a wire sequence w is counted
	// as (w + SeqStride - 1) >> stride (wire), which has 32 - stride bits.
	stride uint
}

// seq outcomes of one packet.
const (
	seqFirst = iota // the first copy of its sequence
	seqCopy         // an expected further copy (Repeats > 1)
	seqDup          // a copy beyond Repeats
	seqLate         // older than the window
)

// newGeometry is the window of window sequences (a power of two, at
// least 32) for repeats.
func newGeometry(window uint64, repeats int) geometry {
	g := geometry{shift: 5, repeats: uint64(max(repeats, 1))}
	if repeats > 1 {
		g.shift = 1
	}
	g.mask = window>>g.shift - 1
	return g
}

// once is g for a stream sent one copy per sequence, numbered 1, 2, 3,
// ... whatever the load's copies (a round trip's latency stream,
// Options.Reflect): no stride, a second copy a duplicate. Its window has
// g's layout (shift, mask: the same memory, the same lanes), so only the
// counting differs, never where a word lives.
func (g geometry) once() geometry {
	g.stride, g.repeats = 0, 1
	return g
}

// withStride is g counting sequences that advance by stride (a power of
// two, Options.SeqStride) from one sent frame to the next.
func (g geometry) withStride(stride int) geometry {
	g.stride = 0
	for 1<<g.stride < stride {
		g.stride++
	}
	return g
}

// wire is the sequence a frame's 32-bit wire sequence counts as: with a
// stride of 2^k, (w + 2^k - 1) >> k, so that pktgen's first sequence 1
// and every 2^k-th after it (1, 1+2^k, ...) count as 1, 2, ..., modulo
// 2^(32-k) across the wire's own wrap (2^k divides 2^32).
func (g geometry) wire(w uint32) uint32 {
	return (w + 1<<g.stride - 1) >> g.stride
}

// words is the number of 64-bit words of one window.
func (g geometry) words() uint64 { return g.mask + 1 }

// bytes is the memory of one window.
func (g geometry) bytes() uint64 { return g.words() * 8 }

// wireBits is how many bits of a word's absolute index a 32-bit wire
// sequence carries.
func (g geometry) wireBits() uint { return 32 - g.stride - g.shift }

// headStep is how far (in words) a recorded word may pass the stream's
// head before it becomes the head: the head lags the stream by at most
// this plus the window (2^22 words at MaxWindow), well inside the 2^26
// words (2^30 with Repeats > 1) either side of the head that a wire
// sequence unwraps to.
const headStep = 1 << 16

// unwrap places wire sequence wire on the lap nearest head (a 64-bit
// word index, 0 for none yet) and returns its word's absolute index and
// its 64-bit sequence.
func (g geometry) unwrap(wire uint32, head uint64) (word, seq uint64) {
	wb := g.wireBits()
	q := uint64(wire) >> g.shift
	d := (q - head) & (1<<wb - 1)
	word = head + d
	if d >= 1<<(wb-1) {
		word -= 1 << wb
	}
	if int64(word) < 0 {
		word += 1 << wb
	}
	return word, word<<g.shift | uint64(wire)&(1<<g.shift-1)
}

// window is one stream's sequence state, shared by a table and its forks
// (the AF_PACKET rings): the ring of words, the head, and the missing
// ranges of the words it evicted.
type window struct {
	// g is how the stream's sequences are counted: the table's
	// geometry, or its once variant for a latency stream.
	g     geometry
	words []uint64
	head  atomic.Uint64 // see headStep
	// tail is one past the run of seen sequences from tailFrom that
	// evictions of full words in order extend without the lock (a
	// compare-and-swap from the word's first sequence to one past its
	// last); the run is added to seen when the tail moves, and at the end.
	tail     atomic.Uint64
	mu       sync.Mutex // guards tailFrom, seen
	tailFrom uint64
	seen     rangeList // the sequences the evicted words saw
}

func newWindow(g geometry, maxRanges int) *window {
	return &window{g: g, words: make([]uint64, g.words()), seen: newRangeList(maxRanges)}
}

// addRun adds the seen sequences [from, end) (none when end <= from).
func (win *window) addRun(from, end uint64) {
	if end <= from {
		return
	}
	win.mu.Lock()
	win.seen.add(from, end-1)
	win.mu.Unlock()
}

// advance makes word the head if it is more than headStep past head (the
// head as its caller read it).
func (win *window) advance(word, head uint64) {
	if int64(word-head) > headStep {
		win.head.Store(word)
	}
}

// lane returns lane l of word v: a bit, or a 16-bit counter.
func (g geometry) lane(v, l uint64) uint64 {
	if g.shift == 5 {
		return v >> l & 1
	}
	return v >> (16 * l) & 0xffff
}

// unit is the value that adds one copy to lane l.
func (g geometry) unit(l uint64) uint64 {
	if g.shift == 5 {
		return 1 << l
	}
	return 1 << (16 * l)
}

// mark records sequence seq (in word w) in win, atomically, and says
// what the packet was; head is win's head as the caller read it. A word
// it evicts has its missing sequences recorded (evicted).
func (g geometry) mark(win *window, w, seq, head uint64) int {
	p := &win.words[w&g.mask]
	l := seq & (1<<g.shift - 1)
	tag := uint64(uint32(w)) << 32
	unit := g.unit(l)
	for {
		old := atomic.LoadUint64(p)
		var next uint64
		out, evict := seqFirst, false
		switch dt := int32(uint32(w) - uint32(old>>32)); {
		case old == 0 || dt > 0: // unused, or an older word: evict it
			next, evict = tag|unit, true
		case dt < 0:
			return seqLate
		default:
			c := g.lane(old, l)
			if c >= g.repeats {
				return seqDup
			}
			if c > 0 {
				out = seqCopy
			}
			next = old + unit
		}
		if atomic.CompareAndSwapUint64(p, old, next) {
			if evict {
				g.evicted(win, old, w)
			}
			win.advance(w, head)
			return out
		}
	}
}

// evicted records what word w's arrival in its slot made final: the
// sequences old (the slot's word before, 0: none) saw go into win.seen;
// those it did not see, and the slot's words between old's and w (never
// held), are the gaps between seen runs (finalRanges).
func (g geometry) evicted(win *window, old, w uint64) {
	if old == 0 {
		return
	}
	t := w - uint64(uint32(uint32(w)-uint32(old>>32)))
	base, n := t<<g.shift, uint64(1)<<g.shift
	full := g.full(old, t)
	if full && win.tail.CompareAndSwap(base, base+n) {
		return // the word after the tail's: the run grows, no lock
	}
	win.mu.Lock()
	defer win.mu.Unlock()
	if !full {
		g.addSeen(&win.seen, old, t)
		return
	}
	// A full word apart from the tail's run: the run goes to the list
	// and starts again here.
	for {
		end := win.tail.Load()
		if end > win.tailFrom {
			win.seen.add(win.tailFrom, end-1)
		}
		if win.tail.CompareAndSwap(end, base+n) {
			win.tailFrom = base
			return
		}
	}
}

// full reports whether word v (absolute index x) saw every lane's
// sequence (sequence 0, outside the numbering, counts as seen).
func (g geometry) full(v, x uint64) bool {
	if x == 0 {
		v |= g.unit(0)
	}
	if g.shift == 5 {
		return uint32(v) == math.MaxUint32
	}
	return v&0xffff != 0 && v>>16&0xffff != 0
}

// addSeen adds the lanes of word v (absolute index x) that saw their
// sequence to r, as runs.
func (g geometry) addSeen(r *rangeList, v, x uint64) {
	base := x << g.shift
	if g.shift == 5 && uint32(v) == math.MaxUint32 {
		r.add(base, base+31)
		return
	}
	lanes := uint64(1) << g.shift
	for l := uint64(0); l < lanes; l++ {
		if g.lane(v, l) == 0 {
			continue
		}
		e := l
		for e+1 < lanes && g.lane(v, e+1) != 0 {
			e++
		}
		r.add(base|l, base|e)
		l = e
	}
}

// finalRanges is the first limit missing ranges of a stream: the gaps
// between the sequences its evicted words saw (win.seen) and those the
// window still holds from before its last N words (stale words, added
// in a copy), below the last N words; then windowRanges for those. While
// the seen list was cut short (more runs than it holds), only the gaps
// below its cut, which are exact.
func (g geometry) finalRanges(win *window, maxSeq uint64, limit int) [][2]uint64 {
	win.mu.Lock()
	seen := win.seen
	seen.r = slices.Clone(seen.r)
	if end := win.tail.Load(); end > win.tailFrom {
		seen.add(win.tailFrom, end-1)
	}
	win.mu.Unlock()
	out := [][2]uint64{}
	if maxSeq == 0 {
		return out
	}
	top := maxSeq >> g.shift
	lo := uint64(0)
	if top > g.mask {
		lo = top - g.mask
	}
	if lo == 0 {
		held, _ := g.windowRanges(win.words, maxSeq, limit)
		return held
	}
	for _, v := range win.words {
		if v == 0 {
			continue
		}
		if x := top - uint64(uint32(uint32(top)-uint32(v>>32))); x < lo {
			g.addSeen(&seen, v, x)
		}
	}
	end := lo << g.shift
	if seen.cut != math.MaxUint64 {
		return seen.gaps(out, seen.cut, limit)
	}
	out = seen.gaps(out, end, limit)
	held, _ := g.windowRanges(win.words, maxSeq, limit)
	for _, h := range held {
		if n := len(out); n > 0 && out[n-1][1]+1 == h[0] {
			out[n-1][1] = h[1]
		} else {
			out = append(out, h)
		}
	}
	if len(out) > limit {
		out = out[:limit]
	}
	return out
}

// windowRanges lists the first limit runs of missing sequences the window
// still holds, as inclusive [from, to] ranges in order, and from, the
// lowest sequence it holds: the words from maxSeq's back N-1 words, each
// either its slot's tag (its lanes tell) or never seen (all missing: its
// slot still has an older word). Runs below from are not listed (missing
// counts them). ranges is never nil.
func (g geometry) windowRanges(words []uint64, maxSeq uint64, limit int) (ranges [][2]uint64, from uint64) {
	ranges = [][2]uint64{}
	if maxSeq == 0 || len(words) == 0 {
		return ranges, 1
	}
	top := maxSeq >> g.shift
	lo := uint64(0)
	if top > g.mask {
		lo = top - g.mask
	}
	from = max(lo<<g.shift, 1)
	lanes := uint64(1) << g.shift
	full := uint64(1)<<lanes - 1 // Repeats == 1: every bit set
	open := false
	var start uint64
	for x := lo; x <= top && (open || len(ranges) < limit); x++ {
		v := words[x&g.mask]
		held := v != 0 && uint32(v>>32) == uint32(x)
		if held && g.shift == 5 && v&full == full && x != 0 && x != top {
			if open {
				ranges = append(ranges, [2]uint64{start, x<<g.shift - 1})
				open = false
			}
			continue
		}
		for l := uint64(0); l < lanes; l++ {
			s := x<<g.shift | l
			if s < from || s > maxSeq {
				continue
			}
			gone := !held || g.lane(v, l) == 0
			switch {
			case gone && !open:
				open, start = true, s
			case !gone && open:
				ranges = append(ranges, [2]uint64{start, s - 1})
				open = false
			}
		}
	}
	if open {
		ranges = append(ranges, [2]uint64{start, maxSeq})
	}
	if len(ranges) > limit {
		ranges = ranges[:limit]
	}
	return ranges, from
}
