//go:build linux

package xdp

import (
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"golang.org/x/sys/unix"

	"github.com/linerate/linerate/pktgen"
)

// XDP return codes.
const (
	xdpAborted = 0
	xdpDrop    = 1
	xdpPass    = 2
	xdpTX      = 3
)

// The state map has one value: a 128-byte slot per CPU, indexed by the
// CPU the program runs on (a sending thread is pinned to its CPU, and
// BPF_PROG_RUN runs the program on the calling CPU with migration off).
// The thread and the program share it through a memory mapping: the
// program counts and paces, the thread reads the count and writes the
// limit (to stop).
const (
	stSeq      = 0  // u64: the last sequence number stamped = frames sent
	stLimit    = 8  // u64: stamp and transmit while seq < limit, drop after
	stTSOff    = 16 // u64: CLOCK_REALTIME - CLOCK_MONOTONIC in ns
	stGap      = 24 // u64: ns between frames; 0 = as fast as possible
	stNext     = 32 // u64: when the next frame is due (CLOCK_MONOTONIC ns)
	stSlack    = 40 // u64: how far behind the schedule may fall before it restarts
	stCsumBase = 48 // u64: the thread's UDP checksum base (csumBase)
	stFirst    = 56 // u64: when the first frame was stamped (CLOCK_MONOTONIC ns)
	stLast     = 64 // u64: when the last clock reading was taken
	stStamp    = 72 // u64: the header's tv_sec and tv_usec words of the last reading, as the frame holds them
	stStampSum = 80 // u64: those words' 16-bit halves added (their part of the UDP checksum)
	stStart    = 88 // u64: drop every frame before this (CLOCK_MONOTONIC ns): the start instant; 0 once past it
	slotLen    = 128
	slotShift  = 7
)

// xmitBulk is the kernel's XDP transmit bulk (DEV_MAP_BULK_SIZE): the
// frames a live-frame batch redirects to one device are handed to its
// driver 16 at a time (veth: into the peer's ring together, which the
// peer takes after the batch; a NIC: onto its ring, the doorbell at the
// batch's end). An unpaced program reads the clock once per bulk, at its
// first frame, and every frame of the bulk carries that reading: the
// time the bulk began, which no frame of it left before. A reading costs
// more than the rest of the program (tens of ns on this VM's TSC; see
// docs/benchmarks.md), so this is what lets the backend stamp every
// frame's time at the rate of a generator that stamps none. A paced
// program reads the clock for every frame (it needs it to pace).
const xmitBulk = 16

// clockEvery is how many frames share a clock reading when unpaced: the
// bulk, or the largest power of two dividing the batch when that is
// smaller, so that a group never spans two batches (the kernel may
// reschedule between batches; a stop ends a call between them, and the
// next call starts its group afresh at a multiple of the batch).
func clockEvery(batch uint32) uint32 {
	n := uint32(1)
	for n < xmitBulk && batch%(2*n) == 0 {
		n *= 2
	}
	return n
}

// genParams are the constants a thread's program is built with.
type genParams struct {
	hdrOff, udpOff     int    // pktgen header and UDP header offsets
	frameLen           int    // the program checks the frame is this long
	sportMin, sportMax uint16 // UDP source port cycle, inclusive
	timestamp          bool
	udpCsum            bool
	cpus               int    // slots in the state map: CPUs 0..cpus-1
	clockEvery         uint32 // unpaced frames per clock reading, a power of two (clockEvery)
	// trim is how many bytes past the frame each run cuts off its tail
	// (bpf_xdp_adjust_tail), 0 for none: a run whose bounds changed has
	// the kernel rebuild the frame's descriptor from the context
	// (rebuildFrame).
	trim int32
	// tagged is a tagged frame's Ethernet header with its 802.1Q tag
	// (nil untagged), written into every frame: a veth peer's stack
	// untags a frame in place (it moves the MAC addresses over the tag),
	// and live-frame mode recycles that page as the next frame.
	tagged []byte
}

// paramsOf returns the program parameters for f over cpus threads. The
// threads' frames differ only in the source address, so one program serves
// them all.
func paramsOf(f *pktgen.Frame, cpus int, batch uint32) genParams {
	p := genParams{clockEvery: clockEvery(batch),
		hdrOff: f.HdrOff, udpOff: f.UDPOff, frameLen: len(f.Bytes),
		sportMin: f.SportMin, sportMax: f.SportMax, timestamp: f.Timestamp, udpCsum: f.UDPCsum, cpus: cpus,
	}
	if f.L3Off > ethHeader {
		p.tagged = slices.Clone(f.Bytes[:f.L3Off])
	}
	return p
}

// ethHeader is an untagged Ethernet header's length.
const ethHeader = 14

// csumBase sums what stays constant in the UDP checksum: the
// pseudo-header and the datagram with the varying fields (source port,
// checksum, sequence, time) taken as zero. Per packet the program adds
// the varying 16-bit words and folds, which gives the exact checksum of
// every frame whatever the page-pool recycled frame held before.
func csumBase(f *pktgen.Frame) uint16 {
	b := append([]byte(nil), f.Bytes...)
	u := b[f.UDPOff:]
	u[0], u[1], u[6], u[7] = 0, 0, 0, 0
	for i := 4; i < 16; i++ {
		b[f.HdrOff+i] = 0
	}
	var sum uint64
	add := func(p []byte) {
		for len(p) >= 2 {
			sum += uint64(binary.BigEndian.Uint16(p))
			p = p[2:]
		}
		if len(p) == 1 {
			sum += uint64(p[0]) << 8
		}
	}
	if f.IPv6 {
		add(b[f.L3Off+8 : f.L3Off+40])
	} else {
		add(b[f.L3Off+12 : f.L3Off+20])
	}
	sum += 17 + uint64(len(u))
	add(u)
	for sum>>16 != 0 {
		sum = sum&0xffff + sum>>16
	}
	return uint16(sum)
}

// instructions builds the generator. Per frame, in the running CPU's
// slot: once seq reaches the limit it drops the frame (so a run sends
// exactly the frames asked for, however many times the kernel runs the
// program); before the start instant it drops it (the call is made
// early, so that its setup is over by then); when paced and the next frame is not due yet it drops it too
// (the kernel runs the program again at once: a spin with nanosecond
// resolution); otherwise it takes the next sequence number, writes the
// sequence, the time (see xmitBulk and clockEvery) and the UDP source port of the cycle,
// the UDP checksum when asked for, and returns XDP_TX, which live-frame
// mode turns into a transmit on the ingress interface. Every varying field
// is written every time: the kernel recycles frames without restoring the
// template.
//
// Registers: r6 seq, r7 packet, r8 checksum sum, r9 slot.
func instructions(p genParams, state *ebpf.Map) asm.Instructions {
	r0, r1, r2, r3 := asm.R0, asm.R1, asm.R2, asm.R3
	r6, r7, r8, r9 := asm.R6, asm.R7, asm.R8, asm.R9
	hdr, udp := int16(p.hdrOff), int16(p.udpOff)
	afterRead := "send" // where a reading goes on once the window has it
	if p.timestamp {
		afterRead = "stamp"
	}
	var ins asm.Instructions
	if p.trim > 0 {
		// Cut the tail the run was given past the frame: the bounds
		// change, so the kernel rebuilds the frame's descriptor from
		// the context after the run (rebuildFrame). The packet pointers
		// are read after it, as the verifier wants.
		ins = append(ins,
			asm.Mov.Reg(r6, asm.R1),
			asm.Mov.Imm(r2, -p.trim),
			asm.FnXdpAdjustTail.Call(),
			asm.JNE.Imm(r0, 0, "abort"),
			asm.Mov.Reg(asm.R1, r6),
		)
	}
	ins = append(ins,
		asm.LoadMem(r7, asm.R1, 0, asm.Word), // data
		asm.LoadMem(r2, asm.R1, 4, asm.Word), // data_end
		asm.Mov.Reg(r3, r7),
		asm.Add.Imm(r3, int32(p.frameLen)),
		asm.JGT.Reg(r3, r2, "abort"),
		asm.FnGetSmpProcessorId.Call(),
		asm.JGE.Imm(r0, int32(p.cpus), "abort"),
		asm.LSh.Imm(r0, slotShift),
		asm.LoadMapValue(r9, state.FD(), 0),
		asm.Add.Reg(r9, r0),
		asm.LoadMem(r6, r9, stSeq, asm.DWord),
		asm.LoadMem(r1, r9, stLimit, asm.DWord),
		asm.JGE.Reg(r6, r1, "drop"),
		// The clock: for every frame when paced or held at the start
		// gate, else for a bulk's first.
		asm.LoadMem(r1, r9, stGap, asm.DWord),
		asm.JNE.Imm(r1, 0, "clock"),
		asm.LoadMem(r1, r9, stStart, asm.DWord),
		asm.JNE.Imm(r1, 0, "clock"),
		asm.Mov.Reg(r1, r6),
		asm.And.Imm(r1, int32(p.clockEvery-1)),
		asm.JNE.Imm(r1, 0, "send"),
		asm.FnKtimeGetNs.Call().WithSymbol("clock"),
		// The start gate: nothing goes before the instant; the first
		// frame at or after it opens the gate for good (sequence 1 then
		// begins a bulk, as without a gate).
		asm.LoadMem(r1, r9, stStart, asm.DWord),
		asm.JEq.Imm(r1, 0, "open"),
		asm.JLT.Reg(r0, r1, "drop"),
		asm.Mov.Imm(r1, 0),
		asm.StoreMem(r9, stStart, r1, asm.DWord),
		// Pacing: drop until the next frame is due; when more than the
		// slack behind, restart the schedule from now.
		asm.LoadMem(r1, r9, stGap, asm.DWord).WithSymbol("open"),
		asm.JEq.Imm(r1, 0, "read"),
		asm.LoadMem(r1, r9, stNext, asm.DWord),
		asm.JLT.Reg(r0, r1, "drop"),
		asm.Mov.Reg(r2, r0),
		asm.Sub.Reg(r2, r1),
		asm.LoadMem(r3, r9, stSlack, asm.DWord),
		asm.JLE.Reg(r2, r3, "due"),
		asm.Mov.Reg(r1, r0),
		asm.LoadMem(r2, r9, stGap, asm.DWord).WithSymbol("due"),
		asm.Add.Reg(r1, r2),
		asm.StoreMem(r9, stNext, r1, asm.DWord),
		// The sending window: the first reading and the last.
		asm.StoreMem(r9, stLast, r0, asm.DWord).WithSymbol("read"),
		asm.LoadMem(r1, r9, stFirst, asm.DWord),
		asm.JNE.Imm(r1, 0, afterRead),
		asm.StoreMem(r9, stFirst, r0, asm.DWord),
	)
	// addWords adds the two 16-bit halves of the 32-bit value in reg to
	// the checksum sum in acc (clobbers r3).
	addWords := func(acc, reg asm.Register) {
		ins = append(ins,
			asm.Mov.Reg32(r3, reg),
			asm.RSh.Imm32(r3, 16),
			asm.Add.Reg(acc, r3),
			asm.Mov.Reg32(r3, reg),
			asm.And.Imm32(r3, 0xffff),
			asm.Add.Reg(acc, r3),
		)
	}
	// The reading as the header's words (tv_sec, tv_usec, big-endian),
	// kept in the slot for the frames that follow it.
	if p.timestamp {
		ins = append(ins,
			asm.LoadMem(r1, r9, stTSOff, asm.DWord).WithSymbol("stamp"),
			asm.Add.Reg(r0, r1), // CLOCK_REALTIME ns
			asm.Mov.Reg(r1, r0),
			asm.Div.Imm(r1, 1_000_000_000), // seconds
			asm.Mod.Imm(r0, 1_000_000_000),
			asm.Div.Imm(r0, 1000), // microseconds
			asm.Mov.Reg32(r1, r1), // the low 32 bits, as pktgen
		)
		if p.udpCsum {
			ins = append(ins, asm.Mov.Imm(r8, 0))
			addWords(r8, r1)
			addWords(r8, r0)
			ins = append(ins, asm.StoreMem(r9, stStampSum, r8, asm.DWord))
		}
		ins = append(ins,
			asm.HostTo(asm.BE, r1, asm.Word),
			asm.HostTo(asm.BE, r0, asm.Word),
			asm.LSh.Imm(r0, 32),
			asm.Or.Reg(r0, r1),
			asm.StoreMem(r9, stStamp, r0, asm.DWord),
		)
	}
	ins = append(ins,
		asm.Add.Imm(r6, 1).WithSymbol("send"),
		asm.StoreMem(r9, stSeq, r6, asm.DWord),
		// sequence, big-endian
		asm.Mov.Reg32(r1, r6),
		asm.HostTo(asm.BE, r1, asm.Word),
		asm.StoreMem(r7, hdr+4, r1, asm.Word),
	)
	// A tagged frame's Ethernet header and tag, as immediates in the
	// host's byte order (what a store writes).
	for off := 0; off < len(p.tagged); {
		switch rest := p.tagged[off:]; {
		case len(rest) >= 4:
			ins = append(ins, asm.StoreImm(r7, int16(off), int64(int32(binary.NativeEndian.Uint32(rest))), asm.Word))
			off += 4
		case len(rest) >= 2:
			ins = append(ins, asm.StoreImm(r7, int16(off), int64(int16(binary.NativeEndian.Uint16(rest))), asm.Half))
			off += 2
		default:
			ins = append(ins, asm.StoreImm(r7, int16(off), int64(int8(rest[0])), asm.Byte))
			off++
		}
	}
	if p.timestamp {
		ins = append(ins,
			asm.LoadMem(r1, r9, stStamp, asm.DWord),
			asm.StoreMem(r7, hdr+8, r1, asm.DWord),
		)
	}
	if p.udpCsum {
		ins = append(ins, asm.LoadMem(r8, r9, stCsumBase, asm.DWord))
		addWords(r8, r6)
		if p.timestamp {
			ins = append(ins,
				asm.LoadMem(r1, r9, stStampSum, asm.DWord),
				asm.Add.Reg(r8, r1),
			)
		}
	}
	// UDP source port: min + (seq-1) % span, as Frame.Stamp does.
	span := uint32(p.sportMax) - uint32(p.sportMin) + 1
	if span > 1 || p.udpCsum {
		ins = append(ins, asm.Mov.Reg32(r1, r6))
		if span > 1 {
			ins = append(ins,
				asm.Sub.Imm32(r1, 1),
				asm.Mod.Imm32(r1, int32(span)),
				asm.Add.Imm32(r1, int32(p.sportMin)),
			)
		} else {
			ins = append(ins, asm.Mov.Imm32(r1, int32(p.sportMin)))
		}
		if p.udpCsum {
			ins = append(ins, asm.Add.Reg(r8, r1))
		}
		ins = append(ins,
			asm.HostTo(asm.BE, r1, asm.Half),
			asm.StoreMem(r7, udp, r1, asm.Half),
		)
	}
	if p.udpCsum {
		// Fold twice (at most 7 words were added to a 16-bit base), take
		// the complement; a computed 0 is sent as 0xffff (RFC 768).
		for range 2 {
			ins = append(ins,
				asm.Mov.Reg(r1, r8),
				asm.RSh.Imm(r1, 16),
				asm.And.Imm(r8, 0xffff),
				asm.Add.Reg(r8, r1),
			)
		}
		ins = append(ins,
			asm.Xor.Imm(r8, 0xffff),
			asm.JNE.Imm(r8, 0, "csum"),
			asm.Mov.Imm(r8, 0xffff),
			asm.HostTo(asm.BE, r8, asm.Half).WithSymbol("csum"),
			asm.StoreMem(r7, udp+6, r8, asm.Half),
		)
	}
	ins = append(ins,
		asm.Mov.Imm(r0, xdpTX),
		asm.Return(),
		asm.Mov.Imm(r0, xdpDrop).WithSymbol("drop"),
		asm.Return(),
		asm.Mov.Imm(r0, xdpAborted).WithSymbol("abort"),
		asm.Return(),
	)
	return ins
}

// newGenerator loads the program and its state map (memory-mappable).
func newGenerator(p genParams) (*ebpf.Program, *ebpf.Map, error) {
	state, err := ebpf.NewMap(&ebpf.MapSpec{
		Name: "lr_gen_state", Type: ebpf.Array, KeySize: 4, ValueSize: uint32(p.cpus * slotLen), MaxEntries: 1,
		Flags: unix.BPF_F_MMAPABLE,
	})
	if err != nil {
		return nil, nil, fmt.Errorf("create the generator's state map (%d CPU slots): %w", p.cpus, err)
	}
	prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{
		Name: "lr_gen", Type: ebpf.XDP, License: "GPL", Instructions: instructions(p, state),
	})
	if err != nil {
		state.Close()
		return nil, nil, fmt.Errorf("load the generator XDP program: %w", err)
	}
	return prog, state, nil
}
