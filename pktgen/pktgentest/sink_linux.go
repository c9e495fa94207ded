//go:build linux

package pktgentest

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/link"
	"golang.org/x/sys/unix"

	"github.com/linerate/linerate/pktgen"
)

// Layout says where the fields are in the frames to expect (all from one
// pktgen.Frame template) and how many streams and sequences to track.
type Layout struct {
	L3Off, UDPOff, HdrOff int
	IPv6                  bool
	// Streams are told apart by the last byte of the source address:
	// stream s has SrcLast+s.
	SrcLast byte
	Streams int
	MaxSeq  int // sequences 1..MaxSeq are recorded per stream
}

// LayoutOf is the layout of frames built from f.
func LayoutOf(f *pktgen.Frame, streams, maxSeq int) Layout {
	src := f.Bytes[f.L3Off+15]
	if f.IPv6 {
		src = f.Bytes[f.L3Off+23]
	}
	return Layout{L3Off: f.L3Off, UDPOff: f.UDPOff, HdrOff: f.HdrOff, IPv6: f.IPv6, SrcLast: src, Streams: streams, MaxSeq: maxSeq}
}

const slotLen = 32 // count u32, pad u32, UDP header (8), pktgen header (16)

// Sink is an attached counting program.
type Sink struct {
	lay   Layout
	slots *ebpf.Map
	stats *ebpf.Map
	prog  *ebpf.Program
	link  link.Link
}

// Stats are the sink's totals.
type Stats struct {
	Test  uint64 // frames with the pktgen magic in a tracked stream and sequence range
	Other uint64 // frames without the magic (ARP, ...): passed to the stack
	Bad   uint64 // frames with the magic outside the tracked streams or sequences
}

// Attach loads the program and attaches it to ifindex (in the calling
// thread's network namespace) in driver mode.
func Attach(ifindex int, lay Layout) (*Sink, error) {
	s := &Sink{lay: lay}
	var err error
	s.slots, err = ebpf.NewMap(&ebpf.MapSpec{
		Name: "lr_sink_slots", Type: ebpf.Array, KeySize: 4, ValueSize: slotLen,
		MaxEntries: uint32(lay.Streams * (lay.MaxSeq + 1)), Flags: unix.BPF_F_MMAPABLE,
	})
	if err != nil {
		return nil, fmt.Errorf("sink: create slots map: %w", err)
	}
	s.stats, err = ebpf.NewMap(&ebpf.MapSpec{Name: "lr_sink_stats", Type: ebpf.Array, KeySize: 4, ValueSize: 24, MaxEntries: 1})
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("sink: create stats map: %w", err)
	}
	s.prog, err = ebpf.NewProgram(&ebpf.ProgramSpec{Name: "lr_sink", Type: ebpf.XDP, License: "GPL", Instructions: s.instructions()})
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("sink: load program: %w", err)
	}
	s.link, err = link.AttachXDP(link.XDPOptions{Program: s.prog, Interface: ifindex, Flags: link.XDPDriverMode})
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("sink: attach to ifindex %d: %w", ifindex, err)
	}
	return s, nil
}

func (s *Sink) instructions() asm.Instructions {
	l := s.lay
	r0, r1, r2, r3 := asm.R0, asm.R1, asm.R2, asm.R3
	r6, r7, r8 := asm.R6, asm.R7, asm.R8
	srcOff := int16(l.L3Off + 15)
	if l.IPv6 {
		srcOff = int16(l.L3Off + 23)
	}
	hdr, udp := int16(l.HdrOff), int16(l.UDPOff)
	magic := pktgen.Magic
	return asm.Instructions{
		asm.LoadMem(r7, asm.R1, 0, asm.Word),
		asm.LoadMem(r2, asm.R1, 4, asm.Word),
		asm.LoadMapValue(r8, s.stats.FD(), 0),
		asm.Mov.Reg(r3, r7),
		asm.Add.Imm(r3, int32(l.HdrOff+pktgen.HeaderLen)),
		asm.JGT.Reg(r3, r2, "other"),
		asm.LoadMem(r1, r7, hdr, asm.Word),
		asm.HostTo(asm.BE, r1, asm.Word),
		asm.JNE.Imm32(r1, int32(magic), "other"),
		asm.LoadMem(r6, r7, hdr+4, asm.Word),
		asm.HostTo(asm.BE, r6, asm.Word),
		asm.JEq.Imm(r6, 0, "bad"),
		asm.JGT.Imm(r6, int32(l.MaxSeq), "bad"),
		asm.LoadMem(r1, r7, srcOff, asm.Byte),
		asm.Sub.Imm(r1, int32(l.SrcLast)),
		asm.JGE.Imm(r1, int32(l.Streams), "bad"), // unsigned: below SrcLast wraps high
		asm.Mul.Imm(r1, int32(l.MaxSeq+1)),
		asm.Add.Reg(r1, r6),
		asm.StoreMem(asm.RFP, -4, r1, asm.Word),
		asm.LoadMapPtr(r1, s.slots.FD()),
		asm.Mov.Reg(r2, asm.RFP),
		asm.Add.Imm(r2, -4),
		asm.FnMapLookupElem.Call(),
		asm.JEq.Imm(r0, 0, "bad"),
		asm.Mov.Imm(r1, 1),
		asm.StoreXAdd(r0, r1, asm.Word),
		asm.LoadMem(r1, r7, udp, asm.DWord),
		asm.StoreMem(r0, 8, r1, asm.DWord),
		asm.LoadMem(r1, r7, hdr, asm.DWord),
		asm.StoreMem(r0, 16, r1, asm.DWord),
		asm.LoadMem(r1, r7, hdr+8, asm.DWord),
		asm.StoreMem(r0, 24, r1, asm.DWord),
		asm.Mov.Imm(r1, 1),
		asm.StoreXAdd(r8, r1, asm.DWord),
		asm.Mov.Imm(r0, 1), // XDP_DROP
		asm.Return(),
		asm.Mov.Imm(r1, 1).WithSymbol("other"),
		asm.Add.Imm(r8, 8),
		asm.StoreXAdd(r8, r1, asm.DWord),
		asm.Mov.Imm(r0, 2), // XDP_PASS
		asm.Return(),
		asm.Mov.Imm(r1, 1).WithSymbol("bad"),
		asm.Add.Imm(r8, 16),
		asm.StoreXAdd(r8, r1, asm.DWord),
		asm.Mov.Imm(r0, 1),
		asm.Return(),
	}
}

// Close detaches and frees everything.
func (s *Sink) Close() error {
	var errs []error
	if s.link != nil {
		errs = append(errs, s.link.Close())
	}
	if s.prog != nil {
		errs = append(errs, s.prog.Close())
	}
	for _, m := range []*ebpf.Map{s.slots, s.stats} {
		if m != nil {
			errs = append(errs, m.Close())
		}
	}
	return errors.Join(errs...)
}

// Stats reads the totals.
func (s *Sink) Stats() (Stats, error) {
	var b [24]byte
	if err := s.stats.Lookup(uint32(0), &b); err != nil {
		return Stats{}, fmt.Errorf("sink: read stats: %w", err)
	}
	return Stats{Test: binary.NativeEndian.Uint64(b[0:]), Other: binary.NativeEndian.Uint64(b[8:]), Bad: binary.NativeEndian.Uint64(b[16:])}, nil
}

// WaitFor polls until at least n test frames were counted or d passed,
// and returns the stats then.
func (s *Sink) WaitFor(n uint64, d time.Duration) (Stats, error) {
	end := time.Now().Add(d)
	for {
		st, err := s.Stats()
		if err != nil || st.Test+st.Bad >= n || time.Now().After(end) {
			return st, err
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Slot is what arrived for one sequence number of one stream.
type Slot struct {
	Count  uint32
	UDP    [8]byte // the UDP header of the last copy
	Header pktgen.Header
}

// Stream returns stream s's slots for sequences 1..n (index 0 is seq 1).
func (s *Sink) Stream(st, n int) ([]Slot, error) {
	if n > s.lay.MaxSeq || st >= s.lay.Streams {
		return nil, fmt.Errorf("sink: stream %d seq %d beyond the layout (%d streams, %d sequences)", st, n, s.lay.Streams, s.lay.MaxSeq)
	}
	mem, err := s.slots.Memory()
	if err != nil {
		return nil, fmt.Errorf("sink: map the slots: %w", err)
	}
	buf := make([]byte, n*slotLen)
	off := int64((st*(s.lay.MaxSeq+1) + 1) * slotLen)
	if _, err := mem.ReadAt(buf, off); err != nil {
		return nil, fmt.Errorf("sink: read stream %d: %w", st, err)
	}
	out := make([]Slot, n)
	for i := range out {
		b := buf[i*slotLen:]
		out[i].Count = binary.NativeEndian.Uint32(b)
		copy(out[i].UDP[:], b[8:16])
		h, err := pktgen.DecodeHeader(b[16:32])
		if err == nil {
			out[i].Header = h
		}
	}
	return out, nil
}
