package receiver

import (
	"cmp"
	"encoding/binary"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/linerate/linerate/latency"
	"github.com/linerate/linerate/pktgen"
)

// streamCounts are one stream's counters, the same in Go and in the XDP
// program's per-slot array (ten little-endian u64, in this order).
type streamCounts struct {
	Received uint64
	MaxSeq   uint64 // the highest sequence, unwrapped to 64 bits
	Dups     uint64
	// Reordered are first copies below MaxSeq.
	Reordered uint64
	Zero      uint64 // packets with sequence 0: outside the numbering
	Unique    uint64 // first copies
	Late      uint64 // older than the window
	// Unrecorded are packets the XDP program could not record in the
	// window: its compare-and-swap lost every try to other CPUs.
	Unrecorded uint64
	// FirstNs is when the first packet arrived: realtime Unix
	// nanoseconds in Go; the XDP program writes CLOCK_MONOTONIC, which
	// Go converts.
	FirstNs uint64
	// Reflected are packets sent back where they came from
	// (Options.Reflect): the XDP program's only.
	Reflected uint64
}

// add adds o's counters into c: sums, the highest max_seq, the earliest
// first arrival.
func (c *streamCounts) add(o streamCounts) {
	c.Received += o.Received
	c.MaxSeq = max(c.MaxSeq, o.MaxSeq)
	c.Dups += o.Dups
	c.Reordered += o.Reordered
	c.Zero += o.Zero
	c.Unique += o.Unique
	c.Late += o.Late
	c.Unrecorded += o.Unrecorded
	c.Reflected += o.Reflected
	if o.FirstNs != 0 && (c.FirstNs == 0 || o.FirstNs < c.FirstNs) {
		c.FirstNs = o.FirstNs
	}
}

type stream struct {
	key streamKey
	// For the IPv4 fast path: the source and destination address bytes
	// as one little-endian word, and the port bytes.
	raw4    uint64
	rawPort uint16
	isV4    bool
	streamCounts
	win   *window  // shared with the table's forks (see seqwindow.go)
	words []uint64 // win.words, for the fast path
	// lat records the stream's delays in this table's order of arrival
	// (nil when latency is off); corrUs is added to each
	// (Options.ClockCorrections of its port).
	lat    *latency.Recorder
	corrUs int64
}

// windows are the streams' sequence windows, shared by a table and its
// forks: one per stream, so duplicates across tables (rings) are exact.
// The stream limit applies here.
type windows struct {
	mu sync.Mutex
	g  geometry
	// once are the UDP destination ports whose streams are sent one copy
	// per sequence whatever g's repeats and stride (Options.Reflect: a
	// round trip's latency streams), counted with g.once.
	once      []uint16
	byKey     map[streamKey]*window
	max       int
	maxRanges int // what a report lists: each window's recorded ranges hold about twice that
	// latency is whether streams record delays; clock and clockErrUs
	// are what a report says they were measured on.
	latency    bool
	clock      latency.Clock
	clockErrUs float64
	corr       map[uint16]time.Duration
}

// window returns k's window, making it when there is room (nil: the
// stream limit is reached).
func (w *windows) window(k streamKey) *window {
	w.mu.Lock()
	defer w.mu.Unlock()
	if ws, ok := w.byKey[k]; ok {
		return ws
	}
	if len(w.byKey) >= w.max {
		return nil
	}
	g := w.g
	if slices.Contains(w.once, k.port) {
		g = g.once()
	}
	ws := newWindow(g, w.maxRanges)
	w.byKey[k] = ws
	return ws
}

// Table is the accounting core: it counts frames per stream, exactly. One
// Table belongs to one goroutine (it has no locks on its counters); tables
// for further goroutines are made with Fork, share its sequence windows
// (duplicates across them are exact) and are combined with Merge. The hot
// path (Add) does not allocate, and its memory does not grow with the
// run's length: each stream has one fixed window.
type Table struct {
	last     *stream    // the stream of the previous test packet
	cache4   [8]*stream // recent IPv4 streams, by a hash of their raw addresses and port
	index    []*stream  // open addressing, power-of-two length
	shift    uint       // 64 - log2(len(index))
	streams  []*stream  // in order of first packet
	other    uint64
	overflow uint64

	wins *windows
	// frameNs is the arrival time of the frame being counted (realtime
	// Unix ns) when the caller knows it (a ring's timestamp); 0: now.
	frameNs uint64
}

// NewTable returns an empty table counting as o says (Repeats, SeqStride,
// Window, MaxStreams, and Reflect's ports counted once per sequence; the
// other fields do not matter here).
func NewTable(o Options) (*Table, error) {
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	return newTable(o), nil
}

// Streams returns the per-stream report (with the first maxRanges
// missing ranges, at most the table's Options.MaxRanges, which is what it
// keeps: O(window) per stream) and the frames that were not test packets
// (other) or belonged to streams beyond MaxStreams (overflow).
func (t *Table) Streams(maxRanges int) (streams []StreamReport, other, overflow uint64) {
	if maxRanges <= 0 || maxRanges > t.wins.maxRanges {
		maxRanges = t.wins.maxRanges
	}
	return t.counts(true, maxRanges)
}

// newTable makes a table for options already through withDefaults.
func newTable(o Options) *Table {
	g := newGeometry(o.Window, o.Repeats).withStride(o.SeqStride)
	return newTableOf(&windows{g: g, once: o.Reflect, byKey: map[streamKey]*window{}, max: o.MaxStreams, maxRanges: o.MaxRanges,
		latency: o.Latency == LatencyOneWay, clock: o.Clock, clockErrUs: o.ClockErrorUs, corr: o.ClockCorrections}, o.MaxStreams)
}

func newTableOf(w *windows, maxStreams int) *Table {
	n := 1
	for n < 2*maxStreams {
		n <<= 1
	}
	t := &Table{index: make([]*stream, n), wins: w}
	for s := n; s > 1; s >>= 1 {
		t.shift++
	}
	t.shift = 64 - t.shift
	return t
}

// Fork returns an empty table that shares t's sequence windows and stream
// limit: for another goroutine counting the same traffic (a ring of the
// AF_PACKET method). Merge it back into t when done.
func (t *Table) Fork() *Table { return newTableOf(t.wins, t.wins.max) }

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
		t.count(s, binary.BigEndian.Uint32(b[46:]))
		t.record(s, sentUs(b[42:]))
		return
	}
	var k streamKey
	seq, sent, ok := parseAny(b, &k)
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
	t.count(s, seq)
	t.record(s, sent)
}

// record adds the delay of s's packet sent at sentUs (Unix µs): its
// arrival (the ring's timestamp, else now) less its send time.
func (t *Table) record(s *stream, sentUs uint64) {
	if s.lat == nil {
		return
	}
	arr := t.frameNs
	if arr == 0 {
		arr = uint64(time.Now().UnixNano())
	}
	s.lat.Record(int64(arr/1000) - int64(sentUs) + s.corrUs)
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

// count updates stream s for one packet with wire sequence wire.
func (t *Table) count(s *stream, wire uint32) {
	s.Received++
	win := s.win
	g := &win.g
	wire = g.wire(wire)
	head := win.head.Load()
	// Fast path: the next sequence in order, within the word of the one
	// before (geometry.mark's case of the same tag and a clear bit), and
	// on the head's lap (this table's max_seq is not behind the stream by
	// a multiple of 2^32: the unwrap would agree).
	if sq := s.MaxSeq + 1; g.shift == 5 && g.stride == 0 && wire == uint32(sq) && sq&31 != 0 && sq>>5-head+1<<26 < 1<<27 {
		p := &s.words[sq>>5&g.mask]
		old := atomic.LoadUint64(p)
		m := uint64(1) << (sq & 31)
		if old>>32 == sq>>5&0xffffffff && old&m == 0 && atomic.CompareAndSwapUint64(p, old, old|m) {
			s.Unique++
			s.MaxSeq = sq
			return
		}
	}
	w, sq := g.unwrap(wire, head)
	if sq == 0 {
		s.Zero++
		return
	}
	switch g.mark(win, w, sq, head) {
	case seqFirst:
		s.Unique++
		if sq < s.MaxSeq {
			s.Reordered++
		} else {
			s.MaxSeq = sq
		}
	case seqCopy:
		s.MaxSeq = max(s.MaxSeq, sq)
	case seqDup:
		s.Dups++
	case seqLate:
		s.Late++
	}
}

func newStream(k streamKey, lat bool) *stream {
	s := &stream{key: k}
	if lat {
		s.lat = new(latency.Recorder)
	}
	if k.src0 == 0 && k.dst0 == 0 && k.src1>>32 == 0xffff && k.dst1>>32 == 0xffff {
		var b [10]byte
		binary.BigEndian.PutUint32(b[0:], uint32(k.src1))
		binary.BigEndian.PutUint32(b[4:], uint32(k.dst1))
		binary.BigEndian.PutUint16(b[8:], k.port)
		s.raw4, s.rawPort, s.isV4 = binary.LittleEndian.Uint64(b[0:]), binary.LittleEndian.Uint16(b[8:]), true
	}
	return s
}

// lookup finds k's stream, adding it when add is set and the shared
// windows have room for it.
func (t *Table) lookup(k *streamKey, add bool) *stream {
	mask := uint64(len(t.index) - 1)
	for i := k.hash() >> t.shift; ; i = (i + 1) & mask {
		s := t.index[i]
		if s == nil {
			if !add {
				return nil
			}
			ws := t.wins.window(*k)
			if ws == nil {
				return nil
			}
			s = newStream(*k, t.wins.latency)
			s.win, s.words = ws, ws.words
			s.corrUs = t.wins.corr[k.port].Microseconds()
			s.FirstNs = t.frameNs
			if s.FirstNs == 0 {
				s.FirstNs = uint64(time.Now().UnixNano())
			}
			t.index[i] = s
			t.streams = append(t.streams, s)
			return s
		}
		if s.key.eq(k) {
			return s
		}
	}
}

// Merge adds o's counts into t: received, unique, duplicates, late and
// reordered add up, max_seq is the larger, the first arrival the earlier.
// o must be a Fork of t (or t of o): they share the windows, so a
// sequence counted by both is a duplicate already. o is not changed.
func (t *Table) Merge(o *Table) {
	t.other += o.other
	t.overflow += o.overflow
	for _, os := range o.streams {
		s := t.lookup(&os.key, false)
		if s == nil {
			if len(t.streams) >= len(t.index)/2 {
				t.rehash(2 * len(t.index))
			}
			s = newStream(os.key, os.lat != nil)
			s.win, s.words = os.win, os.words
			t.insert(s)
		}
		s.add(os.streamCounts)
		if os.lat != nil {
			s.lat.H.Add(&os.lat.H)
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
// missing ranges are listed (geometry.finalRanges: O(window) per
// stream); without, none (missing is exact either way).
func (t *Table) counts(final bool, maxRanges int) (streams []StreamReport, other, overflow uint64) {
	streams = make([]StreamReport, 0, len(t.streams))
	for _, s := range t.streams {
		var lat *latency.Latency
		if s.lat != nil {
			lat = &latency.Latency{Histogram: s.lat.H, Clock: t.wins.clock, ClockErrorUs: t.wins.clockErrUs}
		}
		r := streamReport(s.key, s.streamCounts, lat)
		if final {
			r.MissingRanges = s.win.g.finalRanges(s.win, s.MaxSeq, maxRanges)
		}
		streams = append(streams, r)
	}
	sortStreams(streams)
	return streams, t.other, t.overflow
}

// streamReport turns one stream's counters and delays (nil: latency
// off) into its report, without missing ranges; the XDP method calls it
// with what it read from its maps.
func streamReport(k streamKey, c streamCounts, lat *latency.Latency) StreamReport {
	src, dst := k.addrs()
	r := StreamReport{
		Src: src, Dst: dst, DstPort: k.port,
		Received: c.Received, MaxSeq: c.MaxSeq, Duplicates: c.Dups, Reordered: c.Reordered,
		Late: c.Late, Unrecorded: c.Unrecorded, BeyondCapacity: c.Zero, FirstArrivalNs: c.FirstNs,
		Reflected: c.Reflected, MissingRanges: [][2]uint64{},
	}
	if c.MaxSeq > c.Unique {
		r.Missing = c.MaxSeq - c.Unique
	}
	r.Latency = lat
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
