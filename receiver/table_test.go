package receiver

import (
	"encoding/binary"
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// seqs returns from..to inclusive, without the numbers in skip.
func seqs(from, to uint32, skip ...uint32) []uint32 {
	var s []uint32
	for i := from; i <= to; i++ {
		if !slices.Contains(skip, i) {
			s = append(s, i)
		}
	}
	return s
}

func rng(from, to uint32) []uint32 { return seqs(from, to) }

func cat(parts ...[]uint32) []uint32 { return slices.Concat(parts...) }

func streamFrames(tmpl testFrame, ss []uint32) [][]byte {
	var out [][]byte
	for _, s := range ss {
		f := tmpl
		f.seq = s
		out = append(out, f.bytes())
	}
	return out
}

func mustOptions(t testing.TB, o Options) Options {
	t.Helper()
	o, err := o.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// tableCase is a sequence of frames and what a receiver must count.
type tableCase struct {
	name     string
	opts     Options
	frames   [][]byte
	want     []StreamReport
	other    uint64
	overflow uint64
}

func tableCases() []tableCase {
	v6a, v6b := netip.MustParseAddr("2001:2::1"), netip.MustParseAddr("2001:2::2")
	sr := func(received, maxSeq, dups, reordered, missing uint64, ranges ...[2]uint64) StreamReport {
		if ranges == nil {
			ranges = [][2]uint64{}
		}
		return StreamReport{Src: addrA, Dst: addrB, DstPort: 9, Received: received, MaxSeq: maxSeq,
			Duplicates: dups, Reordered: reordered, Missing: missing, MissingRanges: ranges}
	}
	manyGaps := func() []uint32 { // every third sequence lost: 30 ranges
		var s []uint32
		for i := uint32(1); i <= 90; i++ {
			if i%3 != 0 {
				s = append(s, i)
			}
		}
		return s
	}
	return append([]tableCase{
		{name: "in order", frames: streamFrames(testFrame{}, rng(1, 100)), want: []StreamReport{sr(100, 100, 0, 0, 0)}},
		{name: "middle range lost", frames: streamFrames(testFrame{}, seqs(1, 100, rng(40, 49)...)),
			want: []StreamReport{sr(90, 100, 0, 0, 10, [2]uint64{40, 49})}},
		{name: "head loss", frames: streamFrames(testFrame{}, rng(3, 50)), want: []StreamReport{sr(48, 50, 0, 0, 2, [2]uint64{1, 2})}},
		{name: "tail loss shows in max_seq", frames: streamFrames(testFrame{}, rng(1, 60)), want: []StreamReport{sr(60, 60, 0, 0, 0)}},
		{name: "gaps across words", frames: streamFrames(testFrame{}, cat(rng(1, 59), rng(131, 200), []uint32{64}, rng(300, 300))),
			want: []StreamReport{sr(131, 300, 0, 1, 169, [2]uint64{60, 63}, [2]uint64{65, 130}, [2]uint64{201, 299})}},
		{name: "duplicates", frames: streamFrames(testFrame{}, cat(rng(1, 10), []uint32{5, 5, 10})), want: []StreamReport{sr(13, 10, 3, 0, 0)}},
		{name: "reorder", frames: streamFrames(testFrame{}, []uint32{1, 2, 3, 4, 6, 7, 8, 5, 9, 10}), want: []StreamReport{sr(10, 10, 0, 1, 0)}},
		{name: "late arrival fills a gap", frames: streamFrames(testFrame{}, []uint32{1, 2, 9, 3, 4, 5, 6, 7, 8, 10}), want: []StreamReport{sr(10, 10, 0, 6, 0)}},
		{name: "repeats", opts: Options{Repeats: 3},
			frames: streamFrames(testFrame{}, cat(rng(1, 3), rng(1, 3), rng(1, 3), []uint32{2}, []uint32{4, 4}, []uint32{6, 6, 6})),
			want:   []StreamReport{sr(15, 6, 1, 0, 1, [2]uint64{5, 5})}}, // copies are not reordered: only first copies are
		{name: "repeats of one are duplicates", opts: Options{Repeats: 1}, frames: streamFrames(testFrame{}, []uint32{1, 1, 1}),
			want: []StreamReport{sr(3, 1, 2, 0, 0)}},
		{name: "vlan tags are the same stream", frames: slices.Concat(streamFrames(testFrame{vlans: 1}, rng(1, 5)), streamFrames(testFrame{vlans: 2}, rng(6, 10))),
			want: []StreamReport{sr(10, 10, 0, 0, 0)}},
		{name: "ipv4 options and vlan tags", frames: slices.Concat(streamFrames(testFrame{ihl: 15}, rng(1, 3)), streamFrames(testFrame{ihl: 6, vlans: 2}, rng(4, 6)),
			streamFrames(testFrame{src: v6a, dst: v6b, vlans: 1}, rng(1, 2))),
			want: []StreamReport{sr(6, 6, 0, 0, 0), {Src: v6a, Dst: v6b, DstPort: 9, Received: 2, MaxSeq: 2, MissingRanges: [][2]uint64{}}}},
		interleaved(),
		{name: "ipv6 and ipv4 streams", frames: slices.Concat(streamFrames(testFrame{src: v6a, dst: v6b, port: 7}, seqs(1, 20, 4)), streamFrames(testFrame{}, rng(1, 3))),
			want: []StreamReport{sr(3, 3, 0, 0, 0), {Src: v6a, Dst: v6b, DstPort: 7, Received: 19, MaxSeq: 20, Missing: 1, MissingRanges: [][2]uint64{{4, 4}}}}},
		{name: "ports and sources split streams",
			frames: slices.Concat(streamFrames(testFrame{port: 10}, rng(1, 2)), streamFrames(testFrame{src: netip.MustParseAddr("198.18.0.11")}, rng(2, 3)), streamFrames(testFrame{}, rng(1, 1))),
			want: []StreamReport{sr(1, 1, 0, 0, 0), {Src: addrA, Dst: addrB, DstPort: 10, Received: 2, MaxSeq: 2, MissingRanges: [][2]uint64{}},
				{Src: netip.MustParseAddr("198.18.0.11"), Dst: addrB, DstPort: 9, Received: 2, MaxSeq: 3, Missing: 1, MissingRanges: [][2]uint64{{1, 1}}}}},
		{name: "non-test packets", frames: slices.Concat(streamFrames(testFrame{}, rng(1, 2)), [][]byte{testFrame{arp: true}.bytes(), testFrame{noMagic: true}.bytes(), {1, 2}}),
			want: []StreamReport{sr(2, 2, 0, 0, 0)}, other: 3},
		{name: "sequence zero", frames: streamFrames(testFrame{}, cat(seqs(1, 70, 10), []uint32{0, 66})),
			want: []StreamReport{{Src: addrA, Dst: addrB, DstPort: 9, Received: 71, MaxSeq: 70, Duplicates: 1, Missing: 1, MissingRanges: [][2]uint64{{10, 10}}, BeyondCapacity: 1}}},
		{name: "stream limit", opts: Options{MaxStreams: 1}, frames: slices.Concat(streamFrames(testFrame{}, rng(1, 2)), streamFrames(testFrame{port: 10}, rng(1, 3))),
			want: []StreamReport{sr(2, 2, 0, 0, 0)}, overflow: 3},
		{name: "range limit", opts: Options{MaxRanges: 2}, frames: streamFrames(testFrame{}, manyGaps()),
			want: []StreamReport{sr(60, 89, 0, 0, 29, [2]uint64{3, 3}, [2]uint64{6, 6})}},
	}, windowCases()...)
}

// interleaved is 12 IPv4 streams (more than Table's stream cache holds)
// sent round-robin: stream i loses sequence i+1 and repeats sequence 20.
func interleaved() tableCase {
	c := tableCase{name: "12 streams interleaved"}
	for seq := uint32(1); seq <= 20; seq++ {
		for i := uint32(0); i < 12; i++ {
			if seq != i+1 {
				c.frames = append(c.frames, testFrame{port: uint16(100 + i), src: netip.AddrFrom4([4]byte{198, 18, 1, byte(i % 3)}), seq: seq}.bytes())
			}
		}
	}
	for i := uint32(0); i < 12; i++ {
		c.frames = append(c.frames, testFrame{port: uint16(100 + i), src: netip.AddrFrom4([4]byte{198, 18, 1, byte(i % 3)}), seq: 20}.bytes())
	}
	for i := uint32(0); i < 12; i++ {
		c.want = append(c.want, StreamReport{Src: netip.AddrFrom4([4]byte{198, 18, 1, byte(i % 3)}), Dst: addrB, DstPort: uint16(100 + i),
			Received: 20, MaxSeq: 20, Duplicates: 1, Missing: 1, MissingRanges: [][2]uint64{{uint64(i) + 1, uint64(i) + 1}}})
	}
	sortStreams(c.want)
	return c
}

var cmpAddr = cmp.Comparer(func(a, b netip.Addr) bool { return a == b })

func TestTable(t *testing.T) {
	for _, tt := range tableCases() {
		t.Run(tt.name, func(t *testing.T) {
			o := mustOptions(t, tt.opts)
			tab, err := NewTable(tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range tt.frames {
				tab.Add(f)
			}
			got, other, overflow := tab.Streams(tt.opts.MaxRanges)
			clearTimes(t, got)
			if diff := cmp.Diff(tt.want, got, cmpAddr); diff != "" {
				t.Errorf("streams (-want +got):\n%s", diff)
			}
			if other != tt.other || overflow != tt.overflow {
				t.Errorf("other, overflow = %d, %d; want %d, %d", other, overflow, tt.other, tt.overflow)
			}
			// The live count of missing agrees with the final one.
			live, _, _ := tab.counts(false, o.MaxRanges)
			for i := range live {
				if live[i].Missing != got[i].Missing {
					t.Errorf("stream %d: live missing %d, final %d", i, live[i].Missing, got[i].Missing)
				}
			}
		})
	}
}

// BenchmarkAdd is the hot path: parse, stream lookup, window
// compare-and-swap, for one stream in order.
func BenchmarkAdd(b *testing.B) {
	benchAdd(b, 1, 1, LatencyOneWay)
}

// BenchmarkAddLatencyOff is BenchmarkAdd without timing the packets: the
// cost of latency is the difference.
func BenchmarkAddLatencyOff(b *testing.B) {
	benchAdd(b, 1, 1, LatencyOff)
}

// BenchmarkAddStreams counts four IPv4 streams interleaved packet by
// packet (the last-stream cache always misses).
func BenchmarkAddStreams(b *testing.B) {
	benchAdd(b, 4, 1, LatencyOneWay)
}

// BenchmarkAddRepeats counts one stream, each sequence sent 4 times.
func BenchmarkAddRepeats(b *testing.B) {
	benchAdd(b, 1, 4, LatencyOneWay)
}

// benchAdd feeds the table batches of 256 frames, as the AF_PACKET
// method does with a ring block, each frame's sequence advanced between
// batches (that rewrite is included in the time), and reports ns/packet.
// Frames are stamped a few µs before their arrival (the ring's time, as
// the AF_PACKET method sets it per frame), so that each delay takes the
// histogram's path, not the absurd one.
func benchAdd(b *testing.B, streams, repeats int, lat LatencyMode) {
	const batch = 256
	o := mustOptions(b, Options{Repeats: repeats, Latency: lat})
	tab := newTable(o)
	now := uint64(time.Now().UnixMicro())
	tab.frameNs = (now + 1500) * 1000
	off := 14 + 20 + 8 + 4
	frames := make([][]byte, batch)
	for i := range frames {
		// Frame i is packet i: stream i%streams, sequence 1+i/(streams*repeats).
		frames[i] = testFrame{port: uint16(9 + i%streams), seq: uint32(1 + i/(streams*repeats)), sentUs: now - uint64(i%64)}.bytes()
	}
	step := uint32(batch / (streams * repeats))
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		for _, f := range frames {
			tab.Add(f)
		}
		for _, f := range frames {
			binary.BigEndian.PutUint32(f[off:], binary.BigEndian.Uint32(f[off:])+step)
		}
		n += batch
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n), "ns/packet")
	s, _, _ := tab.counts(false, 0)
	var got uint64
	for _, st := range s {
		got += st.Received
		if st.Duplicates != 0 || st.Missing != 0 {
			b.Fatalf("stream %+v", st)
		}
	}
	if got != uint64(n) {
		b.Fatalf("received %d of %d", got, n)
	}
}

// clearTimes checks every stream has its first arrival and a delay for
// every packet received, and clears both, for comparing the rest.
func clearTimes(t *testing.T, ss []StreamReport) {
	t.Helper()
	for i := range ss {
		if ss[i].FirstArrivalNs == 0 {
			t.Errorf("stream %v->%v:%d: no first arrival", ss[i].Src, ss[i].Dst, ss[i].DstPort)
		}
		if l := ss[i].Latency; l == nil || l.Samples() != ss[i].Received {
			t.Errorf("stream %v->%v:%d: latency %+v, want a sample for each of its %d packets", ss[i].Src, ss[i].Dst, ss[i].DstPort, l, ss[i].Received)
		}
		ss[i].FirstArrivalNs, ss[i].Latency = 0, nil
	}
}
