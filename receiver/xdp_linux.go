//go:build linux

package receiver

import (
	"encoding/binary"
	"errors"
	"fmt"
	"unsafe"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"golang.org/x/sys/unix"
)

// xdpMethod counts in an XDP program (see xdpProgram); Go reads its maps.
type xdpMethod struct {
	o                                         Options
	streams, counts, seqs, meta, percpu, last *ebpf.Map
	heads                                     *ebpf.Map // per slot: the stream's head (see headStep), shared by all CPUs
	prog                                      *ebpf.Program
	lnk                                       link.Link
	g                                         geometry // every slot's window in seqs
}

// loadXDP creates the maps and loads the program; nothing is attached.
func loadXDP(o Options) (_ *xdpMethod, err error) {
	x := &xdpMethod{o: o, g: newGeometry(o.Window, o.Repeats)}
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
		{&x.percpu, ebpf.MapSpec{Name: "lr_percpu", Type: ebpf.PerCPUArray, KeySize: 4, ValueSize: 8, MaxEntries: 2}},
		{&x.last, ebpf.MapSpec{Name: "lr_last", Type: ebpf.PerCPUArray, KeySize: 4, ValueSize: lastSize, MaxEntries: lastEntries}},
		{&x.heads, ebpf.MapSpec{Name: "lr_heads", Type: ebpf.Array, KeySize: 4, ValueSize: 8, MaxEntries: uint32(o.MaxStreams)}},
	}
	for _, s := range specs {
		m, err := ebpf.NewMap(&s.spec)
		if err != nil {
			return nil, fmt.Errorf("xdp: create map %s (%s, %d entries): %w", s.spec.Name, s.spec.Type, s.spec.MaxEntries, err)
		}
		*s.m = m
	}
	insns, err := xdpProgram(xdpParams{
		streams: x.streams.FD(), counts: x.counts.FD(), seqs: x.seqs.FD(), meta: x.meta.FD(), percpu: x.percpu.FD(), last: x.last.FD(), heads: x.heads.FD(),
		maxStreams: o.MaxStreams, g: x.g, pass: o.Pass,
	})
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
	return x, nil
}

// attach attaches the program to ifindex, native (driver) mode first,
// else generic (SKB) mode, and says which.
func (x *xdpMethod) attach(ifindex int) (mode string, err error) {
	l, nerr := link.AttachXDP(link.XDPOptions{Program: x.prog, Interface: ifindex, Flags: link.XDPDriverMode})
	if nerr == nil {
		x.lnk = l
		return "native (driver) mode", nil
	}
	l, gerr := link.AttachXDP(link.XDPOptions{Program: x.prog, Interface: ifindex, Flags: link.XDPGenericMode})
	if gerr != nil {
		return "", fmt.Errorf("xdp: attach to ifindex %d: native mode: %v; generic mode: %w", ifindex, nerr, gerr)
	}
	x.lnk = l
	why := nerr
	var errno unix.Errno
	if errors.As(nerr, &errno) {
		why = errno // "operation not supported" says it all
	}
	return fmt.Sprintf("generic (SKB) mode (native mode refused: %v)", why), nil
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
	for _, m := range []*ebpf.Map{x.streams, x.counts, x.seqs, x.meta, x.percpu, x.last, x.heads} {
		if m != nil {
			m.Close()
		}
	}
	if x.prog != nil {
		x.prog.Close()
	}
	return err
}

// read collects the counters; with final, also the windows, for missing
// ranges.
func (x *xdpMethod) read(final bool) (counts, error) {
	var c counts
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
		r := streamReport(xdpKey(key), sc)
		if final {
			// The program records no ranges at eviction: they are
			// listed from the window's words, from its lowest sequence.
			words, err := x.words(slot)
			if err != nil {
				return c, err
			}
			var from uint64
			r.MissingRanges, from = x.g.windowRanges(words, sc.MaxSeq, x.o.MaxRanges)
			if from > 1 {
				r.MissingRangesFrom = from
			}
		}
		c.streams = append(c.streams, r)
	}
	if err := it.Err(); err != nil {
		return c, fmt.Errorf("xdp: list streams: %w", err)
	}
	sortStreams(c.streams)
	for _, v := range []struct {
		index uint32
		dst   *uint64
	}{{cpuOther, &c.other}, {cpuOverflow, &c.overflow}} {
		var per []uint64
		if err := x.percpu.Lookup(v.index, &per); err != nil {
			return c, fmt.Errorf("xdp: read per-CPU counter %d: %w", v.index, err)
		}
		for _, n := range per {
			*v.dst += n
		}
	}
	return c, nil
}

// monoToRealtime is CLOCK_REALTIME - CLOCK_MONOTONIC now, in ns: what
// turns the program's bpf_ktime_get_ns() into Unix time. The realtime
// read sits between two monotonic ones; their mean is taken.
func monoToRealtime() int64 {
	var m1, r, m2 unix.Timespec
	_ = unix.ClockGettime(unix.CLOCK_MONOTONIC, &m1)
	_ = unix.ClockGettime(unix.CLOCK_REALTIME, &r)
	_ = unix.ClockGettime(unix.CLOCK_MONOTONIC, &m2)
	return r.Nano() - (m1.Nano()+m2.Nano())/2
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
