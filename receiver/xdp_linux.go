//go:build linux

package receiver

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"time"
	"unsafe"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"github.com/cilium/ebpf/ringbuf"
	"golang.org/x/sys/unix"

	"github.com/linerate/linerate/pktgen"
)

// xdpMethod counts in an XDP program (see xdpProgram); Go reads its maps.
type xdpMethod struct {
	o                                         Options
	streams, counts, seqs, meta, percpu, last *ebpf.Map
	heads                                     *ebpf.Map // per slot: the stream's head (see headStep), shared by all CPUs
	evicted                                   *ebpf.Map // ring buffer: the program's eviction records
	runs                                      *ebpf.Map // per CPU and slot: the run of full words the CPU evicted last
	queues                                    *ebpf.Map // per CPU and slot: the packets per receive queue (SpreadQueues u64)
	lat                                       *ebpf.Map // per CPU and slot: latValue (nil: latency off)
	clock                                     *ebpf.Map // one u64: what turns the program's clock into Unix ns
	corr                                      *ebpf.Map // UDP destination port → µs to add to its delays (nil: none)
	reflect                                   *ebpf.Map // UDP destination ports whose test packets are sent back (nil: none)
	clk                                       bpfClock
	clockDone                                 chan struct{} // closed to stop keeping clock current
	clockKept                                 chan struct{} // closed when keepClock ends
	prog                                      *ebpf.Program
	lnk                                       link.Link
	g                                         geometry // every slot's window in seqs

	// The eviction records' reader: consume adds what each evicted word
	// saw to its slot's seen runs (wins[slot].seen, geometry.evicted),
	// for complete missing ranges. drained gets a value each time a
	// flush found the ring empty; consumed is closed when consume ends.
	evq       *ringbuf.Reader
	wins      []*window
	drained   chan struct{}
	consumed  chan struct{}
	consuming bool // consume was started
}

// evictedRing is the eviction records' ring buffer: 8 MiB, 262 144
// records (32 bytes with the ring's header), 0.56 s of evictions of a
// 14.88 Mpps stream (one per 32 packets) if Go stopped reading.
const evictedRing = 8 << 20

// evictedPoll is how often the eviction records are read: the program
// wakes nobody (a wakeup per record cost more than the rest of the
// program), and 10 ms of records are far less than the ring holds.
const evictedPoll = 10 * time.Millisecond

// loadXDP creates the maps, loads the program and starts reading its
// eviction records; nothing is attached.
func loadXDP(o Options) (*xdpMethod, error) {
	x, err := newXDP(o, evictedRing)
	if err != nil {
		return nil, err
	}
	x.startConsume()
	x.startClock()
	return x, nil
}

// startConsume starts reading the eviction records.
func (x *xdpMethod) startConsume() {
	x.consuming = true
	go x.consume()
}

// newXDP creates the maps (an eviction ring buffer of ring bytes) and
// loads the program; it reads no eviction records yet.
func newXDP(o Options, ring uint32) (_ *xdpMethod, err error) {
	x := &xdpMethod{o: o, g: newGeometry(o.Window, o.Repeats).withStride(o.SeqStride), wins: make([]*window, o.MaxStreams),
		drained: make(chan struct{}, 1), consumed: make(chan struct{})}
	defer func() {
		if err != nil {
			x.close()
		}
	}()
	words := uint64(o.MaxStreams) * x.g.words()
	if words*8 > maxXDPBytes-uint64(unix.Getpagesize()) {
		return nil, fmt.Errorf("%w: xdp: %d streams × a window of %d sequences need %d MiB of sequence state, more than a BPF array holds (4 GiB): lower MaxStreams or Window",
			ErrOptions, o.MaxStreams, o.Window, words*8>>20)
	}
	specs := []struct {
		m    **ebpf.Map
		spec ebpf.MapSpec
	}{
		{&x.streams, ebpf.MapSpec{Name: "lr_streams", Type: ebpf.Hash, KeySize: xdpKeySize, ValueSize: 4, MaxEntries: uint32(o.MaxStreams)}},
		{&x.counts, ebpf.MapSpec{Name: "lr_counts", Type: ebpf.PerCPUArray, KeySize: 4, ValueSize: slotSize, MaxEntries: uint32(o.MaxStreams)}},
		{&x.seqs, ebpf.MapSpec{Name: "lr_seqs", Type: ebpf.Array, KeySize: 4, ValueSize: 8, MaxEntries: uint32(words), Flags: unix.BPF_F_MMAPABLE}},
		{&x.meta, ebpf.MapSpec{Name: "lr_meta", Type: ebpf.Array, KeySize: 4, ValueSize: 8, MaxEntries: 1}},
		{&x.percpu, ebpf.MapSpec{Name: "lr_percpu", Type: ebpf.PerCPUArray, KeySize: 4, ValueSize: 8, MaxEntries: cpuCounters}},
		{&x.last, ebpf.MapSpec{Name: "lr_last", Type: ebpf.PerCPUArray, KeySize: 4, ValueSize: lastSize, MaxEntries: lastEntries}},
		{&x.heads, ebpf.MapSpec{Name: "lr_heads", Type: ebpf.Array, KeySize: 4, ValueSize: 8, MaxEntries: uint32(o.MaxStreams)}},
		{&x.evicted, ebpf.MapSpec{Name: "lr_evicted", Type: ebpf.RingBuf, MaxEntries: ring}},
		{&x.runs, ebpf.MapSpec{Name: "lr_runs", Type: ebpf.PerCPUArray, KeySize: 4, ValueSize: 16, MaxEntries: uint32(o.MaxStreams)}},
		{&x.queues, ebpf.MapSpec{Name: "lr_queues", Type: ebpf.PerCPUArray, KeySize: 4, ValueSize: spreadBytes, MaxEntries: uint32(o.MaxStreams)}},
	}
	if o.Latency == LatencyOneWay {
		specs = append(specs, []struct {
			m    **ebpf.Map
			spec ebpf.MapSpec
		}{
			{&x.lat, ebpf.MapSpec{Name: "lr_lat", Type: ebpf.PerCPUArray, KeySize: 4, ValueSize: latValSize, MaxEntries: uint32(o.MaxStreams)}},
			{&x.clock, ebpf.MapSpec{Name: "lr_clock", Type: ebpf.Array, KeySize: 4, ValueSize: 8, MaxEntries: 1}},
		}...)
		if len(o.ClockCorrections) > 0 {
			specs = append(specs, struct {
				m    **ebpf.Map
				spec ebpf.MapSpec
			}{&x.corr, ebpf.MapSpec{Name: "lr_corr", Type: ebpf.Hash, KeySize: 2, ValueSize: 8, MaxEntries: uint32(len(o.ClockCorrections))}})
		}
	}
	if len(o.Reflect) > 0 {
		specs = append(specs, struct {
			m    **ebpf.Map
			spec ebpf.MapSpec
		}{&x.reflect, ebpf.MapSpec{Name: "lr_reflect", Type: ebpf.Hash, KeySize: 2, ValueSize: 1, MaxEntries: uint32(len(o.Reflect))}})
	}
	for _, s := range specs {
		m, err := ebpf.NewMap(&s.spec)
		if err != nil {
			return nil, fmt.Errorf("xdp: create map %s (%s, %d entries): %w", s.spec.Name, s.spec.Type, s.spec.MaxEntries, err)
		}
		*s.m = m
	}
	params := xdpParams{
		streams: x.streams.FD(), counts: x.counts.FD(), seqs: x.seqs.FD(), meta: x.meta.FD(), percpu: x.percpu.FD(), last: x.last.FD(), heads: x.heads.FD(), evicted: x.evicted.FD(), runs: x.runs.FD(), queues: x.queues.FD(),
		maxStreams: o.MaxStreams, g: x.g, pass: o.Pass, lat: -1, clock: -1, corr: -1, reflect: -1,
	}
	if x.reflect != nil {
		params.reflect, params.reflectVLAN = x.reflect.FD(), o.ReflectVLAN
		for _, port := range o.Reflect {
			if err := x.reflect.Update(binary.BigEndian.AppendUint16(nil, port), uint8(1), ebpf.UpdateAny); err != nil {
				return nil, fmt.Errorf("xdp: mark port %d to reflect: %w", port, err)
			}
		}
	}
	if x.lat != nil {
		x.clk = bpfClocks()
		params.lat, params.clock, params.now = x.lat.FD(), x.clock.FD(), x.clk.helper
		if err := x.setClock(); err != nil {
			return nil, err
		}
		if x.corr != nil {
			params.corr = x.corr.FD()
			if err := x.setCorrections(); err != nil {
				return nil, err
			}
		}
		o.Logger.Debug("xdp: delays timed on "+x.clk.name, "why", x.clk.why)
	}
	insns, err := xdpProgram(params)
	if err != nil {
		return nil, err
	}
	x.prog, err = ebpf.NewProgramWithOptions(&ebpf.ProgramSpec{
		Name: "lr_recv", Type: ebpf.XDP, License: "Dual MIT/GPL", Instructions: insns,
	}, ebpf.ProgramOptions{LogLevel: ebpf.LogLevelBranch})
	if err != nil {
		var ve *ebpf.VerifierError
		if errors.As(err, &ve) {
			o.Logger.Debug("xdp verifier log", "log", fmt.Sprintf("%+v", ve))
		}
		return nil, fmt.Errorf("xdp: load the counting program (needs kernel 5.12+ for atomic compare-and-swap): %w", err)
	}
	if x.evq, err = ringbuf.NewReader(x.evicted); err != nil {
		return nil, fmt.Errorf("xdp: read the eviction ring buffer: %w", err)
	}
	return x, nil
}

// consume reads the eviction records until the reader is closed.
func (x *xdpMethod) consume() {
	defer close(x.consumed)
	var rec ringbuf.Record
	for {
		x.evq.SetDeadline(time.Now().Add(evictedPoll))
		err := x.evq.ReadInto(&rec)
		switch {
		case err == nil:
			x.record(rec.RawSample)
		case errors.Is(err, os.ErrDeadlineExceeded): // the program wakes nobody: poll
		case errors.Is(err, ringbuf.ErrFlushed):
			x.drained <- struct{}{}
		case errors.Is(err, ringbuf.ErrClosed):
			return
		default:
			x.o.Logger.Error("xdp: read the eviction records: missing ranges stop here", "error", err)
			return
		}
	}
}

// record adds eviction record b (slot u32, kind u32, a u64, b u64) to
// its slot's seen runs: a word {old, w}, or a CPU's run {from, end}.
func (x *xdpMethod) record(b []byte) {
	if len(b) < evictedSize {
		return
	}
	win := x.slotWindow(binary.NativeEndian.Uint32(b[0:]))
	if win == nil {
		return
	}
	u, v := binary.NativeEndian.Uint64(b[8:]), binary.NativeEndian.Uint64(b[16:])
	if binary.NativeEndian.Uint32(b[4:]) == evictedWord {
		x.g.evicted(win, u, v)
		return
	}
	win.addRun(u, v)
}

// slotWindow is slot's seen runs (nil: no such slot).
func (x *xdpMethod) slotWindow(slot uint32) *window {
	if int(slot) >= len(x.wins) {
		return nil
	}
	win := x.wins[slot]
	if win == nil {
		win = &window{seen: newRangeList(x.o.MaxRanges)}
		x.wins[slot] = win
	}
	return win
}

// cpuRuns adds to slot's seen runs the run of full words each CPU holds
// in the program's runs map.
func (x *xdpMethod) cpuRuns(slot uint32, win *window) error {
	var per [][16]byte
	if err := x.runs.Lookup(slot, &per); err != nil {
		return fmt.Errorf("xdp: read the per-CPU runs of slot %d: %w", slot, err)
	}
	for _, r := range per {
		win.addRun(binary.NativeEndian.Uint64(r[0:]), binary.NativeEndian.Uint64(r[8:]))
	}
	return nil
}

// drain returns once every eviction record written so far is read (false:
// the reader had stopped).
func (x *xdpMethod) drain() bool {
	if err := x.evq.Flush(); err != nil {
		return false
	}
	select {
	case <-x.drained:
		return true
	case <-x.consumed:
		return false
	}
}

// attach attaches the program to ifindex (attachXDP).
func (x *xdpMethod) attach(ifindex int) (mode, detail string, err error) {
	x.lnk, mode, detail, err = attachXDP(x.prog, ifindex, "xdp")
	return mode, detail, err
}

// attachXDP attaches prog to ifindex, native (driver) mode first, else
// generic (SKB) mode, and says which (XDPNative or XDPGeneric) and, in
// words, why; errors start with what (the method).
func attachXDP(prog *ebpf.Program, ifindex int, what string) (_ link.Link, mode, detail string, err error) {
	l, nerr := link.AttachXDP(link.XDPOptions{Program: prog, Interface: ifindex, Flags: link.XDPDriverMode})
	if nerr == nil {
		return l, XDPNative, "native (driver) mode", nil
	}
	l, gerr := link.AttachXDP(link.XDPOptions{Program: prog, Interface: ifindex, Flags: link.XDPGenericMode})
	if gerr != nil {
		return nil, "", "", fmt.Errorf("%s: attach to ifindex %d: native mode: %v; generic mode: %w", what, ifindex, nerr, gerr)
	}
	why := nerr
	var errno unix.Errno
	if errors.As(nerr, &errno) {
		why = errno // "operation not supported" says it all
	}
	return l, XDPGeneric, fmt.Sprintf("generic (SKB) mode (native mode refused: %v)", why), nil
}

// detach removes the program from the interface (idempotent).
func (x *xdpMethod) detach() error {
	if x.lnk == nil {
		return nil
	}
	err := x.lnk.Close()
	x.lnk = nil
	if err != nil {
		return fmt.Errorf("xdp: detach: %w", err)
	}
	return nil
}

func (x *xdpMethod) snapshot() (counts, error) { return x.read(false) }

func (x *xdpMethod) stop() (counts, error) {
	if err := x.detach(); err != nil {
		return counts{}, err
	}
	return x.read(true)
}

func (x *xdpMethod) close() error {
	err := x.detach()
	if x.evq != nil {
		x.evq.Close()
		if x.consuming {
			<-x.consumed
		}
	}
	if x.clockDone != nil {
		close(x.clockDone)
		<-x.clockKept
		x.clockDone = nil
	}
	for _, m := range []*ebpf.Map{x.streams, x.counts, x.seqs, x.meta, x.percpu, x.last, x.heads, x.evicted, x.runs, x.queues, x.lat, x.clock, x.corr, x.reflect} {
		if m != nil {
			m.Close()
		}
	}
	if x.prog != nil {
		x.prog.Close()
	}
	return err
}

// read collects the counters; with final, also the windows and the
// eviction records, for missing ranges.
func (x *xdpMethod) read(final bool) (counts, error) {
	var c counts
	percpu := map[uint32]*uint64{cpuOther: &c.other, cpuOverflow: &c.overflow, cpuUnlisted: new(uint64)}
	for index, dst := range percpu {
		var per []uint64
		if err := x.percpu.Lookup(index, &per); err != nil {
			return c, fmt.Errorf("xdp: read per-CPU counter %d: %w", index, err)
		}
		for _, n := range per {
			*dst += n
		}
	}
	// Complete ranges need every eviction record: all read, none lost.
	listed := final && x.drain() && *percpu[cpuUnlisted] == 0
	if final && !listed {
		x.o.Logger.Warn("xdp: eviction records were lost: missing ranges are listed from the window only", "lost", *percpu[cpuUnlisted])
	}
	var key [xdpKeySize]byte
	var slot uint32
	mono := monoToRealtime()
	it := x.streams.Iterate()
	for it.Next(&key, &slot) {
		sc, err := x.slotCounts(slot)
		if err != nil {
			return c, err
		}
		if sc.FirstNs != 0 {
			sc.FirstNs = uint64(int64(sc.FirstNs) + mono)
		}
		lat, err := x.slotLatency(slot)
		if err != nil {
			return c, err
		}
		r := streamReport(xdpKey(key), sc, lat)
		if final {
			if r.Queues, err = x.slotQueues(slot); err != nil {
				return c, err
			}
			words, err := x.words(slot)
			if err != nil {
				return c, err
			}
			if listed {
				win := x.slotWindow(slot)
				if err := x.cpuRuns(slot, win); err != nil {
					return c, err
				}
				win.words = words
				r.MissingRanges = x.g.finalRanges(win, sc.MaxSeq, x.o.MaxRanges)
			} else {
				var from uint64
				r.MissingRanges, from = x.g.windowRanges(words, sc.MaxSeq, x.o.MaxRanges)
				if from > 1 {
					r.MissingRangesFrom = from
				}
			}
		}
		c.streams = append(c.streams, r)
	}
	if err := it.Err(); err != nil {
		return c, fmt.Errorf("xdp: list streams: %w", err)
	}
	sortStreams(c.streams)
	return c, nil
}

// monoToRealtime is CLOCK_REALTIME - CLOCK_MONOTONIC now, in ns: what
// turns the program's bpf_ktime_get_ns() into Unix time
// (pktgen.MonoOffset; 0 where it cannot be read, which Linux always can).
func monoToRealtime() int64 {
	off, _ := pktgen.MonoOffset()
	return off
}

// slotCounts sums the CPUs' counters of slot (streamCounts.add: max_seq
// the highest, the first arrival the earliest).
func (x *xdpMethod) slotCounts(slot uint32) (streamCounts, error) {
	var per []streamCounts
	if err := x.counts.Lookup(slot, &per); err != nil {
		return streamCounts{}, fmt.Errorf("xdp: read the per-CPU counters of slot %d: %w", slot, err)
	}
	var sc streamCounts
	for _, p := range per {
		sc.add(p)
	}
	return sc, nil
}

// slotQueues sums the CPUs' per-queue packet counts of slot: the
// stream's spread.
func (x *xdpMethod) slotQueues(slot uint32) ([]QueuePackets, error) {
	var per [][SpreadQueues]uint64
	if err := x.queues.Lookup(slot, &per); err != nil {
		return nil, fmt.Errorf("xdp: read the per-CPU queue counts of slot %d: %w", slot, err)
	}
	var sum [SpreadQueues]uint64
	for _, p := range per {
		for q, n := range p {
			sum[q] += n
		}
	}
	return queueCounts(sum[:]), nil
}

// words copies slot's window out of the memory-mapped array.
func (x *xdpMethod) words(slot uint32) ([]uint64, error) {
	mem, err := x.seqs.Memory()
	if err != nil {
		return nil, fmt.Errorf("xdp: map the sequence array: %w", err)
	}
	n := x.g.words()
	out := make([]uint64, n)
	b := unsafe.Slice((*byte)(unsafe.Pointer(&out[0])), n*8)
	if _, err := mem.ReadAt(b, int64(uint64(slot)*n*8)); err != nil {
		return nil, fmt.Errorf("xdp: read the window of slot %d: %w", slot, err)
	}
	return out, nil
}

// xdpKey decodes the program's stream key: the raw address bytes and
// the port in network order, as parseFrame reads them.
func xdpKey(b [xdpKeySize]byte) streamKey {
	return streamKey{
		src0: binary.BigEndian.Uint64(b[0:]), src1: binary.BigEndian.Uint64(b[8:]),
		dst0: binary.BigEndian.Uint64(b[16:]), dst1: binary.BigEndian.Uint64(b[24:]),
		port: binary.BigEndian.Uint16(b[32:]),
	}
}
