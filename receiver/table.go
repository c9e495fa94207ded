package receiver

import (
	"cmp"
	"encoding/binary"
	"slices"

	"github.com/linerate/linerate/pktgen"
)

// streamCounts are one stream's counters, the same in Go and in the XDP
// program's per-slot array (five little-endian u64: received, max_seq,
// duplicates, reordered, beyond_capacity).
type streamCounts struct {
	Received  uint64
	MaxSeq    uint64
	Dups      uint64
	Reordered uint64
	Beyond    uint64
}

type stream struct {
	key streamKey
	// For the IPv4 fast path: the source and destination address bytes
	// as one little-endian word, and the port bytes.
	raw4    uint64
	rawPort uint16
	isV4    bool
	streamCounts
	words []uint64 // see seqwords.go
}

// Table is the accounting core: it counts frames per stream, exactly. One
// Table belongs to one goroutine (it has no locks); tables of several
// goroutines are combined with Merge. The hot path (Add) does not
// allocate except to grow a stream's sequence state.
type Table struct {
	last     *stream    // the stream of the previous test packet
	cache4   [8]*stream // recent IPv4 streams, by a hash of their raw addresses and port
	index    []*stream  // open addressing, power-of-two length
	shift    uint       // 64 - log2(len(index))
	streams  []*stream  // in order of first packet
	other    uint64
	overflow uint64

	capacity   uint64 // highest sequence tracked
	repeats    uint64
	maxWords   int // words per stream at capacity
	maxStreams int
}

// NewTable returns an empty table counting as o says (Repeats,
// SeqCapacity, MaxStreams; the other fields do not matter here).
func NewTable(o Options) (*Table, error) {
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	return newTable(o), nil
}

// Streams returns the per-stream report (with missing ranges: O(max_seq/64)
// per stream) and the frames that were not test packets (other) or
// belonged to streams beyond MaxStreams (overflow).
func (t *Table) Streams(maxRanges int) (streams []StreamReport, other, overflow uint64) {
	if maxRanges <= 0 {
		maxRanges = DefaultMaxRanges
	}
	return t.counts(true, maxRanges)
}

// newTable makes a table for options already through withDefaults.
func newTable(o Options) *Table {
	n := 1
	for n < 2*o.MaxStreams {
		n <<= 1
	}
	t := &Table{
		index:      make([]*stream, n),
		capacity:   o.SeqCapacity,
		repeats:    uint64(o.Repeats),
		maxWords:   int(wordsPerSlot(o.SeqCapacity, o.Repeats)),
		maxStreams: o.MaxStreams,
	}
	for s := n; s > 1; s >>= 1 {
		t.shift++
	}
	t.shift = 64 - t.shift
	return t
}

// Add counts one frame.
func (t *Table) Add(b []byte) {
	// Fast path: untagged IPv4 without options, the frame nearly every
	// generator sends, compared with the previous packet's stream on the
	// raw address and port bytes.
	if len(b) >= 58 && binary.BigEndian.Uint32(b[12:])&0xffffff00 == 0x08004500 {
		if b[23] != protoUDP || binary.BigEndian.Uint16(b[20:])&0x1fff != 0 || binary.BigEndian.Uint32(b[42:]) != pktgen.Magic {
			t.other++
			return
		}
		addrs, port := uint64(binary.LittleEndian.Uint32(b[26:]))|uint64(binary.LittleEndian.Uint32(b[30:]))<<32, binary.LittleEndian.Uint16(b[36:])
		s := t.last
		if s == nil || s.raw4 != addrs || s.rawPort != port || !s.isV4 {
			if s = t.lookup4(b, addrs, port); s == nil {
				t.overflow++
				return
			}
		}
		sq := uint64(binary.BigEndian.Uint32(b[46:]))
		// In order (above max_seq, so never seen before): no duplicate
		// test, not late.
		if wi := sq >> 6; t.repeats == 1 && sq > s.MaxSeq && sq <= t.capacity && wi < uint64(len(s.words)) {
			s.Received++
			s.MaxSeq = sq
			s.words[wi] |= 1 << (sq & 63)
			return
		}
		t.count(s, sq)
		return
	}
	var k streamKey
	seq, ok := parseAny(b, &k)
	if !ok {
		t.other++
		return
	}
	s := t.last
	if s == nil || !s.key.eq(&k) {
		if s = t.lookup(&k, true); s == nil {
			t.overflow++
			return
		}
		t.last = s
	}
	t.count(s, uint64(seq))
}

// lookup4 finds (or adds) the IPv4 stream of frame b, whose raw address
// and port bytes are addrs and port: first in a small direct-mapped cache
// for interleaved streams, then in the index.
func (t *Table) lookup4(b []byte, addrs uint64, port uint16) *stream {
	ci := (addrs ^ addrs>>32 ^ uint64(port)<<7) * 0x9e3779b97f4a7c15 >> 61
	if c := t.cache4[ci]; c != nil && c.raw4 == addrs && c.rawPort == port {
		t.last = c
		return c
	}
	k := streamKey{
		src1: v4Mapped | uint64(binary.BigEndian.Uint32(b[26:])),
		dst1: v4Mapped | uint64(binary.BigEndian.Uint32(b[30:])),
		port: binary.BigEndian.Uint16(b[36:]),
	}
	s := t.lookup(&k, true)
	if s != nil {
		t.last, t.cache4[ci] = s, s
	}
	return s
}

// count updates stream s for one packet with sequence sq.
func (t *Table) count(s *stream, sq uint64) {
	s.Received++
	if sq == 0 || sq > t.capacity {
		s.Beyond++
		s.MaxSeq = max(s.MaxSeq, sq)
		return
	}
	late := sq < s.MaxSeq
	if sq > s.MaxSeq {
		s.MaxSeq = sq
	}
	if t.repeats == 1 {
		wi := int(sq >> 6)
		if wi >= len(s.words) {
			s.grow(wi, t.maxWords)
		}
		m := uint64(1) << (sq & 63)
		if s.words[wi]&m != 0 {
			s.Dups++
			return
		}
		s.words[wi] |= m
	} else {
		wi := int(sq >> 2)
		if wi >= len(s.words) {
			s.grow(wi, t.maxWords)
		}
		sh := (sq & 3) * 16
		if s.words[wi]>>sh&0xffff >= t.repeats {
			s.Dups++
			return
		}
		s.words[wi] += 1 << sh
	}
	if late {
		s.Reordered++
	}
}

// grow makes room for word wi: at least doubling, at most maxWords.
func (s *stream) grow(wi, maxWords int) {
	n := min(max(wi+1, 2*len(s.words), 1024), maxWords)
	s.words = append(s.words, make([]uint64, n-len(s.words))...)
}

func newStream(k streamKey) *stream {
	s := &stream{key: k}
	if k.src0 == 0 && k.dst0 == 0 && k.src1>>32 == 0xffff && k.dst1>>32 == 0xffff {
		var b [10]byte
		binary.BigEndian.PutUint32(b[0:], uint32(k.src1))
		binary.BigEndian.PutUint32(b[4:], uint32(k.dst1))
		binary.BigEndian.PutUint16(b[8:], k.port)
		s.raw4, s.rawPort, s.isV4 = binary.LittleEndian.Uint64(b[0:]), binary.LittleEndian.Uint16(b[8:]), true
	}
	return s
}

// lookup finds k's stream, adding it when add is set and there is room
// (or always when force is set by merge).
func (t *Table) lookup(k *streamKey, add bool) *stream {
	mask := uint64(len(t.index) - 1)
	for i := k.hash() >> t.shift; ; i = (i + 1) & mask {
		s := t.index[i]
		if s == nil {
			if !add || len(t.streams) >= t.maxStreams {
				return nil
			}
			s = newStream(*k)
			t.index[i] = s
			t.streams = append(t.streams, s)
			return s
		}
		if s.key.eq(k) {
			return s
		}
	}
}

// Merge adds o's counts into t, exactly: received, reordered and
// beyond-capacity add up; a sequence seen in both tables is a duplicate
// (more copies than Repeats across both with Repeats > 1); max_seq is the
// larger. The stream limit does not apply to merging. o must not be used
// afterwards.
func (t *Table) Merge(o *Table) { t.merge(o, true) }

// mergeCounts adds o's counters but not its sequence state: for live
// snapshots, where duplicates across tables are not seen yet.
func (t *Table) mergeCounts(o *Table) { t.merge(o, false) }

func (t *Table) merge(o *Table, words bool) {
	t.other += o.other
	t.overflow += o.overflow
	for _, os := range o.streams {
		s := t.lookup(&os.key, false)
		if s == nil {
			if len(t.streams) >= len(t.index)/2 {
				t.rehash(2 * len(t.index))
			}
			s = newStream(os.key)
			t.insert(s)
		}
		s.Received += os.Received
		s.Dups += os.Dups
		s.Reordered += os.Reordered
		s.Beyond += os.Beyond
		s.MaxSeq = max(s.MaxSeq, os.MaxSeq)
		if words {
			var dups uint64
			s.words, dups = mergeWords(s.words, os.words, int(t.repeats))
			s.Dups += dups
		}
	}
	t.last = nil
	t.cache4 = [8]*stream{}
}

func (t *Table) insert(s *stream) {
	mask := uint64(len(t.index) - 1)
	i := s.key.hash() >> t.shift
	for t.index[i] != nil {
		i = (i + 1) & mask
	}
	t.index[i] = s
	t.streams = append(t.streams, s)
}

func (t *Table) rehash(n int) {
	old := t.streams
	t.index, t.streams, t.shift = make([]*stream, n), nil, 64
	for ; n > 1; n >>= 1 {
		t.shift--
	}
	for _, s := range old {
		t.insert(s)
	}
}

// counts returns the table's totals and per-stream reports. With final,
// missing ranges are computed from the sequence state (O(max_seq/64));
// without, missing is max_seq (within capacity) minus the distinct
// sequences seen (exact too, but no ranges; 0 with Repeats > 1).
func (t *Table) counts(final bool, maxRanges int) (streams []StreamReport, other, overflow uint64) {
	streams = make([]StreamReport, 0, len(t.streams))
	for _, s := range t.streams {
		streams = append(streams, streamReport(s.key, s.streamCounts, s.words, t.capacity, int(t.repeats), final, maxRanges))
	}
	sortStreams(streams)
	return streams, t.other, t.overflow
}

// streamReport turns one stream's counters and sequence state into its
// report; the XDP method calls it with what it read from its maps.
func streamReport(k streamKey, c streamCounts, words []uint64, capacity uint64, repeats int, final bool, maxRanges int) StreamReport {
	src, dst := k.addrs()
	r := StreamReport{
		Src: src, Dst: dst, DstPort: k.port,
		Received: c.Received, MaxSeq: uint32(c.MaxSeq), Duplicates: c.Dups, Reordered: c.Reordered,
		BeyondCapacity: c.Beyond, MissingRanges: [][2]uint32{},
	}
	top := min(c.MaxSeq, capacity)
	switch {
	case final:
		r.Missing, r.MissingRanges = missingRanges(seenBitmap(words, repeats), top, maxRanges)
	case repeats <= 1:
		if distinct := c.Received - c.Dups - c.Beyond; top > distinct {
			r.Missing = top - distinct
		}
	}
	return r
}

func sortStreams(s []StreamReport) {
	slices.SortFunc(s, func(a, b StreamReport) int {
		if c := a.Src.Compare(b.Src); c != 0 {
			return c
		}
		if c := a.Dst.Compare(b.Dst); c != 0 {
			return c
		}
		return cmp.Compare(a.DstPort, b.DstPort)
	})
}
