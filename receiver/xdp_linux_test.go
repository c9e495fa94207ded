//go:build linux

package receiver

import (
	"fmt"
	"os"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"

	"github.com/linerate/linerate/latency"
)

func skipUnlessRoot(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: loads BPF programs")
	}
}

// TestXDPProgramMatchesTable runs every accounting case through the XDP
// program in the kernel (BPF_PROG_TEST_RUN, no interface needed) and
// checks it counts exactly what the Go core counts.
func TestXDPProgramMatchesTable(t *testing.T) {
	skipUnlessRoot(t)
	for _, tt := range tableCases() {
		for _, pass := range []bool{false, true} {
			t.Run(tt.name, func(t *testing.T) {
				opts := tt.opts
				if opts.Window == 0 {
					opts.Window = 1 << 16 // not the default 16 MiB of windows per case
				}
				o := mustOptions(t, opts)
				o.Pass = pass
				x, err := loadXDP(o)
				if err != nil {
					t.Fatal(err)
				}
				defer x.close()
				wantTest, wantOther := uint32(xdpDrop), uint32(xdpPass)
				if pass {
					wantTest = xdpPass
				}
				other := tt.other
				for i, f := range tt.frames {
					if len(f) < 14 { // BPF_PROG_TEST_RUN wants an Ethernet header
						other--
						continue
					}
					ret, err := x.prog.Run(&ebpf.RunOptions{Data: f})
					if err != nil {
						t.Fatal(err)
					}
					var k streamKey
					_, _, ok := parseFrame(f, &k)
					want := wantOther
					if ok {
						want = wantTest
						if slices.Contains(o.Reflect, k.port) {
							want = xdpTx // a latency stream's frame goes back
						}
					}
					if ret != want {
						t.Fatalf("frame %d (test packet %v): verdict %d, want %d", i, ok, ret, want)
					}
				}
				c, err := x.read(true)
				if err != nil {
					t.Fatal(err)
				}
				clearTimes(t, c.streams)
				takeQueue0(t, c.streams)
				takeReflected(t, c.streams, o.Reflect)
				if diff := cmp.Diff(tt.want, c.streams, cmpAddr); diff != "" {
					t.Errorf("streams (-want +got):\n%s", diff)
				}
				if c.other != other || c.overflow != tt.overflow {
					t.Errorf("other, overflow = %d, %d; want %d, %d", c.other, c.overflow, other, tt.overflow)
				}
			})
		}
	}
}

// takeQueue0 checks that every stream's spread is all of its packets on
// queue 0 (BPF_PROG_RUN's frames come in on rx_queue_index 0) and
// clears it, for a comparison with a Table, which knows no queues.
func takeQueue0(t *testing.T, ss []StreamReport) {
	t.Helper()
	for i := range ss {
		want := []QueuePackets{{Queue: 0, Packets: ss[i].Received}}
		if diff := cmp.Diff(want, ss[i].Queues); diff != "" {
			t.Errorf("stream %v->%v:%d: queues (-want +got):\n%s", ss[i].Src, ss[i].Dst, ss[i].DstPort, diff)
		}
		ss[i].Queues = nil
	}
}

// takeReflected checks that every stream of a reflected port had each
// of its packets sent back, and no other stream any, and clears it, for
// a comparison with a Table, which sends nothing back.
func takeReflected(t *testing.T, ss []StreamReport, ports []uint16) {
	t.Helper()
	for i := range ss {
		want := uint64(0)
		if slices.Contains(ports, ss[i].DstPort) {
			want = ss[i].Received
		}
		if ss[i].Reflected != want {
			t.Errorf("stream %v->%v:%d: reflected %d of %d received, want %d", ss[i].Src, ss[i].Dst, ss[i].DstPort, ss[i].Reflected, ss[i].Received, want)
		}
		ss[i].Reflected = 0
	}
}

// TestXDPProgramPerCPU runs one stream's frames through the program on
// two CPUs (BPF_PROG_RUN runs on the calling thread's CPU): received and
// duplicates are exact across CPUs, max_seq is the highest of all, and
// reordered counts first copies that arrived after a higher sequence on
// the same CPU.
func TestXDPProgramPerCPU(t *testing.T) {
	skipUnlessRoot(t)
	if runtime.NumCPU() < 2 {
		t.Skip("needs 2 CPUs")
	}
	x, err := loadXDP(mustOptions(t, Options{Window: 1 << 10}))
	if err != nil {
		t.Fatal(err)
	}
	defer x.close()
	for _, step := range []struct {
		cpu  int
		seqs []uint32
	}{
		{0, rng(1, 50)},
		{1, rng(40, 60)},      // 40-50: duplicates of CPU 0's
		{1, []uint32{55}},     // a duplicate on its own CPU
		{1, []uint32{30}},     // late here, but a duplicate: not reordered
		{1, []uint32{62, 61}}, // 61: reordered
		{0, []uint32{51}},     // a duplicate of CPU 1's, in order here
		{0, []uint32{63}},
		{1, []uint32{70}},
		{0, []uint32{65}}, // below CPU 1's 70, above CPU 0's 63: not reordered
	} {
		if err := runOnCPU(step.cpu, func() error {
			for _, f := range streamFrames(testFrame{}, step.seqs) {
				if _, err := x.prog.Run(&ebpf.RunOptions{Data: f}); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	c, err := x.read(true)
	if err != nil {
		t.Fatal(err)
	}
	want := []StreamReport{{Src: addrA, Dst: addrB, DstPort: 9, Received: 79, MaxSeq: 70, Duplicates: 14, Reordered: 1,
		Missing: 5, MissingRanges: [][2]uint64{{64, 64}, {66, 69}}, Queues: []QueuePackets{{Queue: 0, Packets: 79}}}}
	clearTimes(t, c.streams)
	if diff := cmp.Diff(want, c.streams, cmpAddr); diff != "" {
		t.Errorf("streams (-want +got):\n%s", diff)
	}
}

// TestXDPProgramCPUNewPastWrap: a CPU that first sees a stream after
// 2^32 of its sequences (an RSS or IRQ move mid-run: BPF_PROG_RUN on the
// second CPU), and again after 2^33, counts on the stream's lap: nothing
// late, max_seq, duplicates, missing and its ranges exact. CPU 0 takes the stream
// there in jumps of 2^29 (losses), each followed by a window's worth of
// sequences.
func TestXDPProgramCPUNewPastWrap(t *testing.T) {
	skipUnlessRoot(t)
	if runtime.NumCPU() < 2 {
		t.Skip("needs 2 CPUs")
	}
	for _, repeats := range []int{1, 2} {
		t.Run(fmt.Sprintf("repeats %d", repeats), func(t *testing.T) {
			o := mustOptions(t, Options{Window: MinWindow, Repeats: repeats})
			x, err := loadXDP(o)
			if err != nil {
				t.Fatal(err)
			}
			defer x.close()
			unb := &unbounded{seen: map[uint64]int{}, repeats: repeats}
			var late []uint64 // CPU 1's late count after each lap
			send := func(cpu int, seqs ...uint64) {
				t.Helper()
				if err := runOnCPU(cpu, func() error {
					for _, s := range seqs {
						for range repeats {
							unb.add(s)
							if _, err := x.prog.Run(&ebpf.RunOptions{Data: testFrame{seq: uint32(s)}.bytes()}); err != nil {
								return err
							}
						}
					}
					return nil
				}); err != nil {
					t.Fatal(err)
				}
			}
			send(0, span(1, 3000)...)
			for lap := uint64(1); lap <= 2; lap++ {
				for s := (lap-1)<<32 + 1<<29; s < lap<<32; s += 1 << 29 {
					send(0, span(s, s+MinWindow)...)
				}
				send(0, span(lap<<32, lap<<32+1000)...)
				send(1, span(lap<<32+1001, lap<<32+3000)...)
				send(0, lap<<32+3001)
				send(1, lap<<32+3003, lap<<32+3002, lap<<32+3002) // reordered on CPU 1, a duplicate
				var per []streamCounts
				if err := x.counts.Lookup(uint32(0), &per); err != nil {
					t.Fatal(err)
				}
				late = append(late, per[1].Late)
				if per[1].MaxSeq != lap<<32+3003 {
					t.Errorf("lap %d: CPU 1's max_seq %d, want %d", lap, per[1].MaxSeq, lap<<32+3003)
				}
			}
			if late[0] != 0 || late[1] != 0 {
				t.Errorf("CPU 1 counted %v late (after 2^32, after 2^33)", late)
			}
			c, err := x.read(true)
			if err != nil {
				t.Fatal(err)
			}
			if len(c.streams) != 1 {
				t.Fatalf("%d streams", len(c.streams))
			}
			g := c.streams[0]
			if g.Received != unb.received || g.Duplicates != unb.dups || g.MaxSeq != unb.max || g.Missing != unb.missing() || g.Late != 0 {
				t.Errorf("received %d dups %d max %d missing %d late %d; want %d %d %d %d 0",
					g.Received, g.Duplicates, g.MaxSeq, g.Missing, g.Late, unb.received, unb.dups, unb.max, unb.missing())
			}
			if want := unb.ranges(o.MaxRanges); g.MissingRangesFrom != 0 || !slices.Equal(g.MissingRanges, want) {
				t.Errorf("ranges %v from %d, want %v", g.MissingRanges, g.MissingRangesFrom, want)
			}
		})
	}
}

// TestXDPProgramLostEvictions: when the eviction ring buffer had no room
// for some records (here: a one-page ring nobody reads while 40 000
// sequences, every third lost, go through), the lost ones are counted and the ranges fall
// back to those the window still held, from missing_ranges_from; the
// counts stay exact.
func TestXDPProgramLostEvictions(t *testing.T) {
	skipUnlessRoot(t)
	o := mustOptions(t, Options{Window: MinWindow})
	x, err := newXDP(o, uint32(os.Getpagesize()))
	if err != nil {
		t.Fatal(err)
	}
	defer x.close()
	var lossy []uint32 // every third sequence lost: every word goes to the ring
	for q := uint32(1); q <= 40000; q++ {
		if q%3 != 0 {
			lossy = append(lossy, q)
		}
	}
	for _, f := range streamFrames(testFrame{}, lossy) {
		if _, err := x.prog.Run(&ebpf.RunOptions{Data: f}); err != nil {
			t.Fatal(err)
		}
	}
	x.startConsume()
	c, err := x.read(true)
	if err != nil {
		t.Fatal(err)
	}
	var lost []uint64
	if err := x.percpu.Lookup(uint32(cpuUnlisted), &lost); err != nil {
		t.Fatal(err)
	}
	var n uint64
	for _, l := range lost {
		n += l
	}
	g := c.streams[0]
	if n == 0 || g.Missing != 40000/3 || g.MaxSeq != 40000 || g.MissingRangesFrom == 0 || g.MissingRanges[0] != [2]uint64{(g.MissingRangesFrom + 2) / 3 * 3, (g.MissingRangesFrom + 2) / 3 * 3} {
		t.Errorf("%d records lost; %+v", n, g)
	}
}

// The XDP program's delay of each frame is the kernel's clock at the
// program (BPF_PROG_TEST_RUN) less the send time its header carries:
// frames stamped a known delay before the run are recorded with that
// delay and at most the run's own duration more, in the bucket the Go
// layout gives, the negative and absurd ones apart; and latency off
// loads a program without any of it.
func TestXDPLatencyKnownDelays(t *testing.T) {
	skipUnlessRoot(t)
	for _, clk := range []bpfClock{taiClock, monoClock} {
		t.Run(clk.name, func(t *testing.T) {
			bpfClocks = func() bpfClock { return clk }
			t.Cleanup(func() { bpfClocks = chooseBPFClock })
			xdpKnownDelays(t)
		})
	}
}

func xdpKnownDelays(t *testing.T) {
	x, err := loadXDP(mustOptions(t, Options{Window: MinWindow, Clock: latency.SameHost}))
	if err != nil {
		t.Fatal(err)
	}
	defer x.close()
	t.Logf("xdp clock: %s (%s)", x.clk.name, x.clk.why)
	var slack int64
	var want latency.Recorder
	for i, d := range knownDelays {
		before := time.Now()
		sent := uint64(before.UnixMicro() - d)
		if _, err := x.prog.Run(&ebpf.RunOptions{Data: testFrame{seq: uint32(i + 1), sentUs: sent}.bytes()}); err != nil {
			t.Fatal(err)
		}
		slack = max(slack, time.Since(before).Microseconds()+1)
		want.Record(d)
	}
	c, err := x.read(true)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.streams) != 1 || c.streams[0].Latency == nil {
		t.Fatalf("streams %+v", c.streams)
	}
	got := c.streams[0].Latency
	w := want.H
	if got.Samples() != uint64(len(knownDelays)) || got.Negative != w.Negative || got.Absurd != w.Absurd || got.Clock != latency.SameHost {
		t.Errorf("latency %s: want %d samples, %d negative, %d absurd", latencyJSON(got), len(knownDelays), w.Negative, w.Absurd)
	}
	if got.MinUs < w.MinUs || got.MinUs > w.MinUs+uint64(slack) || got.MaxUs < w.MaxUs || got.MaxUs > w.MaxUs+uint64(slack) {
		t.Errorf("min %d max %d, want %d and %d (+%d µs at most)", got.MinUs, got.MaxUs, w.MinUs, w.MaxUs, slack)
	}
	for b, n := range w.Counts {
		if n == 0 {
			continue
		}
		// The delay and up to slack µs more: the bucket of one of them.
		lo, _ := latency.BucketRange(b)
		var found uint64
		for b2 := b; b2 <= latency.Bucket(min(lo+uint64(slack)+64, latency.AbsurdUs-1)); b2++ {
			found += got.Counts[b2]
		}
		if found < n {
			t.Errorf("bucket %d (%d µs): %d samples near it, want %d; latency %s", b, lo, found, n, latencyJSON(got))
		}
	}

	// A port's clock correction, in the kernel: a sender 5 s ahead.
	const ahead = 10009
	cx, err := loadXDP(mustOptions(t, Options{Window: MinWindow, ClockCorrections: map[uint16]time.Duration{ahead: 5 * time.Second}}))
	if err != nil {
		t.Fatal(err)
	}
	defer cx.close()
	before := time.Now()
	for _, f := range []testFrame{{port: ahead, seq: 1, sentUs: uint64(before.UnixMicro() - 700 + 5e6)}, {seq: 1, sentUs: uint64(before.UnixMicro() - 700)}} {
		if _, err := cx.prog.Run(&ebpf.RunOptions{Data: f.bytes()}); err != nil {
			t.Fatal(err)
		}
	}
	took := uint64(time.Since(before).Microseconds() + 1)
	cc, err := cx.read(true)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range cc.streams {
		if l := s.Latency; l == nil || l.Samples() != 1 || l.MinUs < 700 || l.MinUs > 700+took {
			t.Errorf("stream to port %d: latency %s, want one delay of 700 µs (+%d at most)", s.DstPort, latencyJSON(l), took)
		}
	}

	off, err := loadXDP(mustOptions(t, Options{Window: MinWindow, Latency: LatencyOff}))
	if err != nil {
		t.Fatal(err)
	}
	defer off.close()
	if _, err := off.prog.Run(&ebpf.RunOptions{Data: testFrame{seq: 1}.bytes()}); err != nil {
		t.Fatal(err)
	}
	if c, err := off.read(true); err != nil || len(c.streams) != 1 || c.streams[0].Latency != nil || off.lat != nil {
		t.Errorf("latency off: %+v, %v", c.streams, err)
	}
}

// runOnCPU runs f on a thread pinned to cpu.
func runOnCPU(cpu int, f func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		var set unix.CPUSet
		set.Set(cpu)
		if err := unix.SchedSetaffinity(0, &set); err != nil {
			errc <- fmt.Errorf("pin to cpu %d: %w", cpu, err)
			return
		}
		errc <- f()
	}()
	return <-errc
}

// TestAtomicEncoding: the atomics the program relies on
// marshal to the kernel's immediates (see atomicFetch).
func TestAtomicEncoding(t *testing.T) {
	for _, tt := range []struct {
		op   asm.AtomicOp
		want int64
	}{{asm.FetchOr, 0x41}, {asm.FetchAdd, 0x01}, {asm.CmpXchg, 0xf1}} {
		if got := atomicImm(atomicFetch(tt.op, asm.R0, asm.R1, 0)); got != tt.want {
			t.Errorf("%v: imm %#x, want %#x", tt.op, got, tt.want)
		}
	}
	if got := atomicImm(asm.AddAtomic.Mem(asm.R0, asm.R1, asm.DWord, 0)); got != 0 {
		t.Errorf("atomic add: imm %#x, want 0", got)
	}
}

// BenchmarkXDPProgram is the receiver program's cost per packet in the
// kernel, without an interface: BPF_PROG_RUN repeats a driver program
// that numbers the next packet (streams interleaved packet by packet,
// each sequence sent repeats times, all in order) and tail-calls the
// program under test; ns/op is per packet. "drop" is the driver plus a
// program that only drops, "count" one that adds one to a per-CPU counter
// and drops: subtract them for the receiver program's own cost.
//
//	go test -run XXX -bench XDPProgram -benchtime 20000000x ./receiver
func BenchmarkXDPProgram(b *testing.B) {
	skipUnlessRoot(b)
	for _, bb := range []struct {
		name             string
		streams, repeats int
		drop, count      bool
		latency          LatencyMode
	}{
		{name: "drop", streams: 1, repeats: 1, drop: true},
		{name: "count", streams: 1, repeats: 1, count: true},
		{name: "one stream", streams: 1, repeats: 1},
		{name: "one stream, latency off", streams: 1, repeats: 1, latency: LatencyOff},
		{name: "four streams interleaved", streams: 4, repeats: 1},
		{name: "repeats 4", streams: 1, repeats: 4},
	} {
		b.Run(bb.name, func(b *testing.B) {
			per := uint64(bb.streams * bb.repeats)
			o := mustOptions(b, Options{Repeats: bb.repeats, Latency: bb.latency})
			x, err := loadXDP(o)
			if err != nil {
				b.Fatal(err)
			}
			defer x.close()
			target := x.prog
			if bb.drop || bb.count {
				insns := asm.Instructions{asm.Mov.Imm(asm.R0, xdpDrop), asm.Return()}
				if bb.count { // percpu[0]++
					insns = slices.Concat(asm.Instructions{asm.StoreImm(asm.RFP, -4, 0, asm.Word)}, lookup(x.percpu.FD(), -4),
						asm.Instructions{asm.JEq.Imm(asm.R0, 0, "out")}, inc(asm.R0, 0), at("out", insns))
				}
				target, err = ebpf.NewProgram(&ebpf.ProgramSpec{Name: "lr_bench_sink", Type: ebpf.XDP, License: "Dual MIT/GPL", Instructions: insns})
				if err != nil {
					b.Fatal(err)
				}
				defer target.Close()
			}
			driver, n := benchDriver(b, target, bb.streams, bb.repeats)
			// Stamped now: each delay lands in the histogram (a few µs to
			// seconds, as the benchmark runs), not on the absurd path.
			if _, _, err := driver.Benchmark(testFrame{sentUs: uint64(time.Now().UnixMicro())}.bytes(), b.N, b.ResetTimer); err != nil {
				b.Fatal(err)
			}
			if bb.drop || bb.count {
				return
			}
			var sent uint64
			if err := n.Lookup(uint32(0), &sent); err != nil {
				b.Fatal(err)
			}
			c, err := x.read(true)
			if err != nil {
				b.Fatal(err)
			}
			var got uint64
			for _, st := range c.streams {
				got += st.Received
				if st.Duplicates != 0 || st.Reordered != 0 || st.BeyondCapacity != 0 || st.Missing != 0 || st.Late != 0 || st.Unrecorded != 0 {
					b.Fatalf("stream %+v", st)
				}
			}
			if got != sent || uint64(len(c.streams)) != min(per/uint64(bb.repeats), sent) {
				b.Fatalf("counted %d in %d streams, sent %d in %d", got, len(c.streams), sent, bb.streams)
			}
		})
	}
}

// benchDriver returns BenchmarkXDPProgram's driver program, which writes
// packet n's sequence (1 + n/(streams*repeats)) and UDP destination port
// (9 + n%streams) into an untagged IPv4 test frame and tail-calls target,
// and its counter n.
func benchDriver(b *testing.B, target *ebpf.Program, streams, repeats int) (*ebpf.Program, *ebpf.Map) {
	b.Helper()
	n, err := ebpf.NewMap(&ebpf.MapSpec{Name: "lr_bench_n", Type: ebpf.Array, KeySize: 4, ValueSize: 8, MaxEntries: 1})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { n.Close() })
	jump, err := ebpf.NewMap(&ebpf.MapSpec{Name: "lr_bench_jmp", Type: ebpf.ProgramArray, KeySize: 4, ValueSize: 4, MaxEntries: 1})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { jump.Close() })
	if err := jump.Put(uint32(0), target); err != nil {
		b.Fatal(err)
	}
	const portOff = 14 + 20 + 2
	insns := append(frameProlog(n.FD()),
		asm.LoadMem(asm.R1, asm.R0, 0, asm.DWord),
		asm.Mov.Reg(asm.R3, asm.R1),
		asm.Add.Imm(asm.R3, 1),
		asm.StoreMem(asm.R0, 0, asm.R3, asm.DWord),
		asm.Mov.Reg(asm.R3, asm.R1),
		asm.Mod.Imm(asm.R3, int32(streams)),
		asm.Add.Imm(asm.R3, 9),
		asm.HostTo(asm.BE, asm.R3, asm.Half),
		asm.StoreMem(asm.R2, portOff, asm.R3, asm.Half),
		asm.Div.Imm(asm.R1, int32(streams*repeats)),
		asm.Add.Imm(asm.R1, 1),
		asm.HostTo(asm.BE, asm.R1, asm.Word),
		asm.StoreMem(asm.R2, seqOff, asm.R1, asm.Word),
		asm.Mov.Reg(asm.R1, asm.R6),
		asm.LoadMapPtr(asm.R2, jump.FD()),
		asm.Mov.Imm(asm.R3, 0),
		asm.FnTailCall.Call(),
		asm.Mov.Imm(asm.R0, xdpDrop).WithSymbol("drop"),
		asm.Return(),
	)
	prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{Name: "lr_bench_drv", Type: ebpf.XDP, License: "Dual MIT/GPL", Instructions: insns})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { prog.Close() })
	return prog, n
}

// seqOff is where an untagged IPv4 test frame holds its sequence.
const seqOff = 14 + 20 + 8 + 4

// frameProlog starts a test program that numbers untagged IPv4 test
// frames: R6 = the context, R0 = &counter[0] (an array map), R2 = data,
// R3 = data_end, the frame long enough for its sequence; else to "drop".
func frameProlog(counterFD int) asm.Instructions {
	return slices.Concat(asm.Instructions{
		asm.Mov.Reg(asm.R6, asm.R1),
		asm.StoreImm(asm.RFP, -4, 0, asm.Word),
	}, lookup(counterFD, -4), asm.Instructions{
		asm.JEq.Imm(asm.R0, 0, "drop"),
		asm.LoadMem(asm.R2, asm.R6, 0, asm.Word), // data
		asm.LoadMem(asm.R3, asm.R6, 4, asm.Word), // data_end
		asm.Mov.Reg(asm.R4, asm.R2),
		asm.Add.Imm(asm.R4, seqOff+4),
		asm.JGT.Reg(asm.R4, asm.R3, "drop"),
	})
}
