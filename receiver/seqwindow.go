package receiver

import "sync/atomic"

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
// maps to the same slot; the wire sequence is unwrapped to 64 bits by
// taking the lap nearest the highest sequence the CPU (ring) has seen of
// the stream, so a stream past 2^32 sequences stays exact.
//
// Per stream the counters are received, unique (first copies), dups,
// late and max_seq (64-bit), so missing is max_seq - unique: exact,
// however long the run, without scanning anything. Missing ranges are
// listed from the window at the end, for the sequences it still holds.

// geometry is the shape of every stream's window.
type geometry struct {
	shift   uint   // log2 of the sequences per word: 5 (bits) or 1 (two 16-bit counters)
	mask    uint64 // words per window - 1
	repeats uint64
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

// words is the number of 64-bit words of one window.
func (g geometry) words() uint64 { return g.mask + 1 }

// bytes is the memory of one window.
func (g geometry) bytes() uint64 { return g.words() * 8 }

// wireBits is how many bits of a word's absolute index a 32-bit wire
// sequence carries.
func (g geometry) wireBits() uint { return 32 - g.shift }

// unwrap places wire sequence wire on the lap nearest ref (a 64-bit
// sequence, 0 for none yet) and returns its word's absolute index and its
// 64-bit sequence.
func (g geometry) unwrap(wire uint32, ref uint64) (word, seq uint64) {
	wb := g.wireBits()
	q, r := uint64(wire)>>g.shift, ref>>g.shift
	d := (q - r) & (1<<wb - 1)
	word = r + d
	if d >= 1<<(wb-1) {
		word -= 1 << wb
	}
	if int64(word) < 0 {
		word += 1 << wb
	}
	return word, word<<g.shift | uint64(wire)&(1<<g.shift-1)
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

// mark records sequence seq (in word w) in window words, atomically, and
// says what the packet was.
func (g geometry) mark(words []uint64, w, seq uint64) int {
	p := &words[w&g.mask]
	l := seq & (1<<g.shift - 1)
	tag := uint64(uint32(w)) << 32
	unit := g.unit(l)
	for {
		old := atomic.LoadUint64(p)
		var next uint64
		out := seqFirst
		switch dt := int32(uint32(w) - uint32(old>>32)); {
		case old == 0 || dt > 0: // unused, or an older word: evict it
			next = tag | unit
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
			return out
		}
	}
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
