package receiver

import (
	"encoding/binary"
	"math/rand/v2"
	"runtime"
	"testing"
	"unsafe"

	"github.com/linerate/linerate/latency"
)

// TestForgedSequencesBounded feeds four rings' tables (forks of one, as
// the AF_PACKET method has) with what anyone on the data network could
// send: 64 streams' worth of frames (the table counts 8) with forged
// sequence numbers all over the 32-bit space, high ones and alternating
// ones that make the most seen runs. The memory the tables hold after it
// stays inside MemoryBytes for four CPUs, however many frames arrive,
// while the per-stream state did grow to its bounds (the seen runs are
// full): nothing is allocated per sequence.
func TestForgedSequencesBounded(t *testing.T) {
	const rings, ports = 4, 64
	o := mustOptions(t, Options{MaxStreams: 8, Window: MinWindow, MaxRanges: 1024})
	budget, err := o.MemoryBytes(rings)
	if err != nil {
		t.Fatal(err)
	}
	frames := make([][]byte, ports)
	for i := range frames {
		frames[i] = testFrame{port: uint16(1000 + i)}.bytes()
	}
	const seqAt = 14 + 20 + 8 + 4 // the pktgen sequence of an untagged IPv4 frame
	r := rand.New(rand.NewPCG(1, 2))

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	base := newTable(o)
	tabs := []*Table{base}
	for range rings - 1 {
		tabs = append(tabs, base.Fork())
	}
	for n := range 400_000 {
		f := frames[n%ports]
		var seq uint32
		switch n % 4 {
		case 0:
			seq = r.Uint32() // anywhere
		case 1:
			seq = 1<<31 + r.Uint32N(1<<20) // high
		default:
			seq = uint32(2*n + 1) // every other one: a run a sequence
		}
		binary.BigEndian.PutUint32(f[seqAt:], seq)
		tabs[n%rings].Add(f)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	held := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("tables hold %d bytes after 400,000 forged frames; MemoryBytes(%d) = %d", held, rings, budget)
	if held > int64(budget) {
		t.Errorf("tables hold %d bytes, over MemoryBytes(%d) = %d", held, rings, budget)
	}

	// The state was driven to its bounds, not left small.
	w := base.wins
	if len(w.byKey) != o.MaxStreams {
		t.Fatalf("%d windows, want MaxStreams %d", len(w.byKey), o.MaxStreams)
	}
	full := 0
	for _, win := range w.byKey {
		if n := len(win.seen.r); n > win.seen.limit {
			t.Errorf("a stream's seen runs are %d long, over their bound %d", n, win.seen.limit)
		} else if n == win.seen.limit {
			full++
		}
	}
	if full == 0 {
		t.Errorf("no stream's seen runs reached their bound: the test did not exercise it")
	}
	for _, tab := range tabs[1:] {
		base.Merge(tab)
	}
	_, _, overflow := base.Streams(o.MaxRanges)
	if want := uint64(400_000 * (ports - o.MaxStreams) / ports); overflow != want {
		t.Errorf("overflow %d, want %d: the frames of the streams beyond MaxStreams", overflow, want)
	}
	runtime.KeepAlive(tabs)
}

// TestPerCPUStreamBytes checks the per-CPU bound MemoryBytes counts with
// against the stream entry each ring's table makes: the struct, two
// index slots (the index is kept at most half full) and two places in the
// table's list (doubling).
func TestPerCPUStreamBytes(t *testing.T) {
	if n := unsafe.Sizeof(stream{}) + 2*unsafe.Sizeof(&stream{}) + 2*unsafe.Sizeof(&stream{}); n > perCPUStreamBytes {
		t.Errorf("a ring's stream entry takes %d bytes, perCPUStreamBytes is %d", n, perCPUStreamBytes)
	}
	if n := unsafe.Sizeof(latency.Recorder{}) + 8; n > latencyBytes { // + the stream's pointer to it
		t.Errorf("a ring's latency recorder takes %d bytes, latencyBytes is %d", n, latencyBytes)
	}
	if n := unsafe.Sizeof(window{}) + 64; n > perStreamBytes { // + its map entry
		t.Errorf("a window's bookkeeping takes %d bytes, perStreamBytes is %d", n, perStreamBytes)
	}
}

// TestMemoryBytes: the budget's figure grows with every dimension and
// refuses what WithDefaults refuses.
func TestMemoryBytes(t *testing.T) {
	o := Options{MaxStreams: 1024}
	one, err := o.MemoryBytes(1)
	if err != nil {
		t.Fatal(err)
	}
	seq, _ := o.SeqStateBytes()
	sixtyFour, _ := o.MemoryBytes(64)
	if one <= seq || sixtyFour-one != 63*1024*(perCPUStreamBytes+spreadBytes+latencyBytes) {
		t.Errorf("MemoryBytes(1) %d, (64) %d, sequence state %d: want more than the sequence state and %d a CPU", one, sixtyFour, seq, 1024*(perCPUStreamBytes+spreadBytes+latencyBytes))
	}
	o.Latency = LatencyOff
	one, _ = o.MemoryBytes(1)
	sixtyFour, _ = o.MemoryBytes(64)
	if sixtyFour-one != 63*1024*(perCPUStreamBytes+spreadBytes) {
		t.Errorf("latency off: MemoryBytes(1) %d, (64) %d: want %d a CPU", one, sixtyFour, 1024*(perCPUStreamBytes+spreadBytes))
	}
	if _, err := (Options{MaxRanges: MaxRangesLimit + 1}).MemoryBytes(1); err == nil {
		t.Errorf("MaxRanges %d accepted", MaxRangesLimit+1)
	}
	if _, err := (Options{MaxRanges: MaxRangesLimit}).MemoryBytes(1); err != nil {
		t.Errorf("MaxRanges %d: %v", MaxRangesLimit, err)
	}
}
