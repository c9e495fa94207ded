//go:build linux

package receiver

import (
	"encoding/binary"
	"fmt"

	"github.com/cilium/ebpf/asm"

	"github.com/linerate/linerate/internal/bpfasm"
	"github.com/linerate/linerate/latency"
	"github.com/linerate/linerate/pktgen"
)

// XDP verdicts.
const (
	xdpDrop = 1
	xdpPass = 2
	xdpTx   = 3
)

// Layout of the XDP program's maps, shared with the Go side.
const (
	xdpKeySize = 36 // src[16], dst[16] (IPv4 as ::ffff:a.b.c.d), UDP dst port (network order), 2 pad
	// per-CPU slot counters: ten u64, as streamCounts
	slotReceived   = 0
	slotMaxSeq     = 8
	slotDups       = 16
	slotReordered  = 24
	slotZero       = 32
	slotUnique     = 40
	slotLate       = 48
	slotUnrecorded = 56
	slotFirstNs    = 64
	slotReflected  = 72
	slotSize       = 80
	// casTries bounds the window update's compare-and-swap loop
	// (unrolled: the verifier sees no loop).
	casTries = 8
	// per-CPU recent streams, direct-mapped by a hash of the key: the key
	// (40 bytes, zero-padded) and its slot+1 (0: none yet)
	lastSlot    = 40
	lastSize    = 48
	lastEntries = 8  // a power of two
	lastShift   = 61 // 64 - log2(lastEntries)
	// per-CPU latency state of a slot (latValue): the previous delay,
	// RFC 3550's J·16 and its differences, the sum, min and max of the
	// delays in range, the negative and absurd ones, how many were in
	// range, the clock correction of the stream's source, then the
	// histogram's latency.Buckets counts.
	latLast    = 0
	latJ16     = 8
	latJN      = 16
	latSum     = 24
	latMin     = 32
	latMax     = 40
	latNeg     = 48
	latAbsurd  = 56
	latN       = 64
	latCorr    = 72 // µs added to every delay: the clock correction of the stream's port
	latCounts  = 80
	latValSize = latCounts + latency.Buckets*8
	// per-CPU counters
	cpuOther    = 0
	cpuOverflow = 1
	cpuUnlisted = 2 // eviction records the ring buffer had no room for
	cpuCounters = 3
)

// Stack of the program (offsets from the frame pointer R10).
const (
	stKey     = -40  // the 36-byte stream key (40 bytes zeroed)
	stNewSlot = -44  // u32 slot being inserted
	stZero    = -48  // u32 0: the meta map's key
	stWord    = -52  // u32 index into the sequence array
	stSlot    = -56  // u32 slot: the counters map's key
	stCPUKey  = -60  // u32 index into the per-CPU counters
	stLast    = -64  // u32 index into the recent streams
	stW       = -72  // u64 the packet's window word, absolute index
	stHead    = -80  // u64 the stream's head (heads[slot]) as read
	stOld     = -88  // u64 the word the compare-and-swap evicted (0: none)
	stRec     = -112 // the eviction record: slot u32, kind u32, two u64 (see evictedWord)
	stBase    = -120 // u64 the evicted full word's first sequence
	stSent    = -128 // u64 the packet's send time, Unix µs
	stCtx     = -136 // the program's context, kept for reflection
	stL3      = -144 // u64 the IP header's offset in the frame, for reflection
	stQueue   = -148 // u32 the frame's rx_queue_index, for the stream's spread
	stOnce    = -152 // u32 1: the packet's port is reflected (a latency stream, counted once per sequence)
	stLap     = -160 // u64 2^(wire bits) of the packet's stream: its laps' span in words (geometry.wireBits)
	// evictedSize is the eviction record's size (see stRec).
	evictedSize = 24
	// Eviction record kinds: a word {old, w} (geometry.evicted), or a
	// CPU's run of full words {first sequence, one past the last}.
	evictedWord = 0
	evictedRun  = 1
	// bpfRBNoWakeup is BPF_RB_NO_WAKEUP: bpf_ringbuf_output wakes no
	// reader.
	bpfRBNoWakeup = 1
)

// xdpParams shape the program: map file descriptors and limits.
type xdpParams struct {
	streams, counts, seqs, meta, percpu, last, heads, evicted, runs, queues int // map FDs
	maxStreams                                                              int
	g                                                                       geometry // every slot's window
	pass                                                                    bool
	// lat and clock are the latency maps (lat < 0: latency off); now is
	// the clock helper (bpf_ktime_get_tai_ns, else bpf_ktime_get_ns),
	// which clock's one u64 turns into Unix ns; corr holds the clock
	// corrections by UDP destination port (< 0: none).
	lat, clock, corr int
	now              asm.BuiltinFunc
	// reflect holds the UDP destination ports (network order) whose
	// test packets go back where they came from (< 0: none).
	reflect int
	// reflectVLAN is the 802.1Q id a reflection that arrived untagged is
	// sent back with (0: none; Options.ReflectVLAN).
	reflectVLAN int
}

// be16 and be32 are network-order constants as a load of the packet
// bytes into a register sees them on this host.
func be16(v uint16) int32 {
	var b [2]byte
	binary.BigEndian.PutUint16(b[:], v)
	return int32(binary.NativeEndian.Uint16(b[:]))
}

func be32(v uint32) int32 {
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], v)
	return int32(binary.NativeEndian.Uint32(b[:]))
}

// lookup emits r0 = bpf_map_lookup_elem(map, fp+keyOff).
func lookup(mapFD int, keyOff int16) asm.Instructions {
	return asm.Instructions{
		asm.LoadMapPtr(asm.R1, mapFD),
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, int32(keyOff)),
		asm.FnMapLookupElem.Call(),
	}
}

// inc emits *(u64 *)(reg + off) += 1, not atomic: for per-CPU values
// (clobbers R1).
func inc(reg asm.Register, off int16) asm.Instructions {
	return asm.Instructions{
		asm.LoadMem(asm.R1, reg, off, asm.DWord),
		asm.Add.Imm(asm.R1, 1),
		asm.StoreMem(reg, off, asm.R1, asm.DWord),
	}
}

// at labels the first of is with sym.
func at(sym string, is asm.Instructions) asm.Instructions {
	is[0] = is[0].WithSymbol(sym)
	return is
}

// atomicFetch is bpfasm.AtomicFetch (cilium/ebpf v0.22 loses BPF_FETCH).
var atomicFetch = bpfasm.AtomicFetch

// atomicImm is bpfasm.Imm.
var atomicImm = bpfasm.Imm

// latencyRecord is the program's latency.Recorder.Record for the
// packet (every packet of a known stream, as Go records every frame), on
// this CPU's latency state of the slot (R7; R8 = its counters), from
// label "latency" on, ending at "unwrap". In C terms:
//
//	l = &lat[slot] (per CPU); this CPU's first packet of the stream:
//	  l->corr = corr[dst port] (0 when absent)
//	d = (now() + *clock) / 1000 - sent_us + l->corr
//	c->received > 1 -> j = min(|d - l->last|, AbsurdUs);
//	  l->j16 += j - (l->j16 + 8) >> 4; l->jn++
//	l->last = d
//	d < 0 -> l->neg++; d >= AbsurdUs -> l->absurd++
//	else: min, max (the first: both), l->n++, l->sum += d,
//	  l->counts[latency.Bucket(d)]++ (the top bit by binary search)
//
// R9 holds l (it is free until the window's lookup).
func latencyRecord(p xdpParams) asm.Instructions {
	absurd := int32(latency.AbsurdUs)
	is := asm.Instructions{}
	add := func(i ...asm.Instruction) { is = append(is, i...) }
	is = append(is, at("latency", lookup(p.lat, stSlot))...)
	add(
		asm.JEq.Imm(asm.R0, 0, "unwrap"),
		asm.Mov.Reg(asm.R9, asm.R0),
	)
	if p.corr >= 0 {
		add(
			asm.LoadMem(asm.R1, asm.R8, slotReceived, asm.DWord),
			asm.JNE.Imm(asm.R1, 1, "latnow"),
		)
		is = append(is, lookup(p.corr, stKey+32)...) // the key's port, network order
		add(
			asm.JEq.Imm(asm.R0, 0, "latnow"),
			asm.LoadMem(asm.R1, asm.R0, 0, asm.DWord),
			asm.StoreMem(asm.R9, latCorr, asm.R1, asm.DWord),
		)
	}
	add(
		p.now.Call().WithSymbol("latnow"),
		asm.LoadMapValue(asm.R1, p.clock, 0),
		asm.LoadMem(asm.R1, asm.R1, 0, asm.DWord),
		asm.Add.Reg(asm.R0, asm.R1),
		asm.Div.Imm(asm.R0, 1000),
		asm.LoadMem(asm.R1, asm.RFP, stSent, asm.DWord),
		asm.Sub.Reg(asm.R0, asm.R1),
		asm.LoadMem(asm.R1, asm.R9, latCorr, asm.DWord),
		asm.Add.Reg(asm.R0, asm.R1),
		// Jitter, from the second packet this CPU saw of the stream.
		asm.LoadMem(asm.R1, asm.R8, slotReceived, asm.DWord),
		asm.JLE.Imm(asm.R1, 1, "latfirst"),
		asm.LoadMem(asm.R2, asm.R9, latLast, asm.DWord),
		asm.Mov.Reg(asm.R3, asm.R0),
		asm.Sub.Reg(asm.R3, asm.R2),
		asm.JSGE.Imm(asm.R3, 0, "latabs"),
		asm.Neg.Imm(asm.R3, 0),
		asm.JLE.Imm(asm.R3, absurd, "latj").WithSymbol("latabs"),
		asm.Mov.Imm(asm.R3, absurd),
		asm.LoadMem(asm.R4, asm.R9, latJ16, asm.DWord).WithSymbol("latj"),
		asm.Mov.Reg(asm.R5, asm.R4),
		asm.Add.Imm(asm.R5, 8),
		asm.RSh.Imm(asm.R5, 4),
		asm.Sub.Reg(asm.R4, asm.R5),
		asm.Add.Reg(asm.R4, asm.R3),
		asm.StoreMem(asm.R9, latJ16, asm.R4, asm.DWord),
	)
	is = append(is, inc(asm.R9, latJN)...)
	add(
		asm.StoreMem(asm.R9, latLast, asm.R0, asm.DWord).WithSymbol("latfirst"),
		asm.JSLT.Imm(asm.R0, 0, "latneg"),
		asm.JSGE.Imm(asm.R0, absurd, "latabsurd"),
		// Min and max: the first sample in range sets both.
		asm.LoadMem(asm.R1, asm.R9, latN, asm.DWord),
		asm.JNE.Imm(asm.R1, 0, "latmin"),
		asm.StoreMem(asm.R9, latMin, asm.R0, asm.DWord),
		asm.StoreMem(asm.R9, latMax, asm.R0, asm.DWord),
		asm.Ja.Label("latsum"),
		asm.LoadMem(asm.R2, asm.R9, latMin, asm.DWord).WithSymbol("latmin"),
		asm.JGE.Reg(asm.R0, asm.R2, "latmax"),
		asm.StoreMem(asm.R9, latMin, asm.R0, asm.DWord),
		asm.LoadMem(asm.R2, asm.R9, latMax, asm.DWord).WithSymbol("latmax"),
		asm.JLE.Reg(asm.R0, asm.R2, "latsum"),
		asm.StoreMem(asm.R9, latMax, asm.R0, asm.DWord),
		asm.Add.Imm(asm.R1, 1).WithSymbol("latsum"),
		asm.StoreMem(asm.R9, latN, asm.R1, asm.DWord),
		asm.LoadMem(asm.R1, asm.R9, latSum, asm.DWord),
		asm.Add.Reg(asm.R1, asm.R0),
		asm.StoreMem(asm.R9, latSum, asm.R1, asm.DWord),
		// The bucket: R2. Below 2^LinearBits the value itself; else R3 =
		// the top bit's position p, and the bucket is 2^LinearBits +
		// (p-LinearBits)·2^SubBits + the SubBits bits below the top.
		asm.Mov.Reg(asm.R2, asm.R0),
		asm.JLT.Imm(asm.R0, 1<<latency.LinearBits, "latidx"),
		asm.Mov.Imm(asm.R3, 0),
		asm.Mov.Reg(asm.R4, asm.R0),
	)
	for _, sh := range []int32{16, 8, 4, 2, 1} {
		next := fmt.Sprintf("latbit%d", sh)
		add(
			asm.JLT.Imm(asm.R4, 1<<sh, next),
			asm.RSh.Imm(asm.R4, sh),
			asm.Add.Imm(asm.R3, sh),
			asm.Mov.Reg(asm.R4, asm.R4).WithSymbol(next), // a landing place
		)
	}
	add(
		asm.Mov.Reg(asm.R4, asm.R3),
		asm.Sub.Imm(asm.R4, latency.SubBits),
		asm.RSh.Reg(asm.R2, asm.R4),
		asm.And.Imm(asm.R2, 1<<latency.SubBits-1),
		asm.Sub.Imm(asm.R3, latency.LinearBits),
		asm.LSh.Imm(asm.R3, latency.SubBits),
		asm.Add.Reg(asm.R2, asm.R3),
		asm.Add.Imm(asm.R2, 1<<latency.LinearBits),
		asm.JGE.Imm(asm.R2, latency.Buckets, "unwrap").WithSymbol("latidx"), // the verifier's bound; never taken
		asm.LSh.Imm(asm.R2, 3),
		asm.Mov.Reg(asm.R3, asm.R9),
		asm.Add.Reg(asm.R3, asm.R2),
	)
	is = append(is, inc(asm.R3, latCounts)...)
	add(asm.Ja.Label("unwrap"))
	is = append(is, at("latneg", inc(asm.R9, latNeg))...)
	add(asm.Ja.Label("unwrap"))
	is = append(is, at("latabsurd", inc(asm.R9, latAbsurd))...)
	add(asm.Ja.Label("unwrap"))
	return is
}

// reflection sends a counted test packet of a port in the reflect map
// (stOnce, onceCheck's lookup) back where it came from, from label
// "verdict" on (R8 = its slot's counters on this CPU); any other packet
// goes on to label final. In C terms:
//
//	reflect[dst port] absent -> final
//	swap the Ethernet destination and source
//	IPv4: swap the addresses; IPv6: swap the addresses
//	swap the UDP ports
//	c->reflected++; return XDP_TX
//
// No checksum changes: swapping two 16-bit-aligned fields of one sum
// leaves the IPv4 header checksum as it was, and the UDP checksum's
// pseudo-header holds both addresses and its header both ports. The
// bounds are checked again: the verifier knows nothing of the parse
// before the helper calls.
func reflection(p xdpParams, final string) asm.Instructions {
	is := asm.Instructions{asm.LoadMem(asm.R0, asm.RFP, stOnce, asm.Word)} // reflect[dst port], looked up by onceCheck
	add := func(i ...asm.Instruction) { is = append(is, i...) }
	// swap exchanges the size-byte fields at a and b of the packet at R2
	// (clobbers R4, R5).
	swap := func(a, b int16, size asm.Size) {
		add(
			asm.LoadMem(asm.R4, asm.R2, a, size),
			asm.LoadMem(asm.R5, asm.R2, b, size),
			asm.StoreMem(asm.R2, a, asm.R5, size),
			asm.StoreMem(asm.R2, b, asm.R4, size),
		)
	}
	add(asm.JEq.Imm(asm.R0, 0, final))
	add(packetBytes(14, final)...)
	swap(0, 6, asm.Word)
	swap(4, 10, asm.Half)
	add(
		asm.LoadMem(asm.R4, asm.RFP, stL3, asm.DWord),
		asm.JGT.Imm(asm.R4, 14+4*maxVLANs, final),
		asm.Add.Reg(asm.R2, asm.R4),
		asm.Mov.Reg(asm.R4, asm.R2),
		asm.Add.Imm(asm.R4, 1),
		asm.JGT.Reg(asm.R4, asm.R3, final),
		asm.LoadMem(asm.R0, asm.R2, 0, asm.Byte),
		asm.Mov.Reg(asm.R4, asm.R0),
		asm.And.Imm(asm.R4, 0xf0),
		asm.JEq.Imm(asm.R4, 0x60, "reflect6"),
		asm.Mov.Reg(asm.R4, asm.R2),
		asm.Add.Imm(asm.R4, ipv4MinHdr),
		asm.JGT.Reg(asm.R4, asm.R3, final),
	)
	swap(12, 16, asm.Word)
	add(
		asm.And.Imm(asm.R0, 0x0f),
		asm.LSh.Imm(asm.R0, 2),
		asm.Add.Reg(asm.R2, asm.R0),
		asm.Ja.Label("reflectudp"),
		asm.Mov.Reg(asm.R4, asm.R2).WithSymbol("reflect6"),
		asm.Add.Imm(asm.R4, ipv6Hdr),
		asm.JGT.Reg(asm.R4, asm.R3, final),
	)
	swap(8, 24, asm.DWord)
	swap(16, 32, asm.DWord)
	add(
		asm.Add.Imm(asm.R2, ipv6Hdr),
		asm.Mov.Reg(asm.R4, asm.R2).WithSymbol("reflectudp"),
		asm.Add.Imm(asm.R4, udpHdr),
		asm.JGT.Reg(asm.R4, asm.R3, final),
	)
	swap(0, 2, asm.Half)
	if p.reflectVLAN > 0 {
		is = append(is, pushTag(p.reflectVLAN, final)...)
	}
	is = append(is, inc(asm.R8, slotReflected)...)
	add(asm.Mov.Imm(asm.R0, xdpTx), asm.Return())
	return is
}

// pushTag puts 802.1Q id vlan back on a reflection that came untagged
// (its IP header at 14: a NIC's or a veth's receive path took the tag
// into the packet's metadata, where XDP does not see it), so that it goes
// back on the VLAN it came on: the head grown by 4 bytes, the Ethernet
// addresses moved to the front, the tag after them. A tagged one is left
// as it is; one whose head cannot grow goes to label final, unreflected.
func pushTag(vlan int, final string) asm.Instructions {
	is := asm.Instructions{
		asm.LoadMem(asm.R4, asm.RFP, stL3, asm.DWord),
		asm.JNE.Imm(asm.R4, 14, "tagged"),
		asm.LoadMem(asm.R1, asm.RFP, stCtx, asm.DWord),
		asm.Mov.Imm(asm.R2, -4),
		asm.FnXdpAdjustHead.Call(),
		asm.JNE.Imm(asm.R0, 0, final),
	}
	is = append(is, packetBytes(16, final)...)
	return append(is,
		// The addresses, 12 bytes from 4 to 0 (front to back: the
		// copy never overwrites what it has yet to read).
		asm.LoadMem(asm.R4, asm.R2, 4, asm.Word),
		asm.StoreMem(asm.R2, 0, asm.R4, asm.Word),
		asm.LoadMem(asm.R4, asm.R2, 8, asm.Word),
		asm.StoreMem(asm.R2, 4, asm.R4, asm.Word),
		asm.LoadMem(asm.R4, asm.R2, 12, asm.Word),
		asm.StoreMem(asm.R2, 8, asm.R4, asm.Word),
		asm.StoreImm(asm.R2, 12, int64(be16(0x8100)), asm.Half),
		asm.StoreImm(asm.R2, 14, int64(be16(uint16(vlan))), asm.Half),
		asm.Mov.Imm(asm.R4, 0).WithSymbol("tagged"),
	)
}

// packetBytes reloads the packet from the context kept at stCtx (after
// a helper call the verifier knows nothing of the parse): R1 = the
// context, R2 = data, R3 = data_end; fewer than n bytes go to label
// final.
func packetBytes(n int32, final string) asm.Instructions {
	return asm.Instructions{
		asm.LoadMem(asm.R1, asm.RFP, stCtx, asm.DWord),
		asm.LoadMem(asm.R2, asm.R1, 0, asm.Word),
		asm.LoadMem(asm.R3, asm.R1, 4, asm.Word),
		asm.Mov.Reg(asm.R4, asm.R2),
		asm.Add.Imm(asm.R4, n),
		asm.JGT.Reg(asm.R4, asm.R3, final),
	}
}

// parseTest is the program's parse of a frame, up to its pktgen header:
// the receive queue at stQueue, the stream key at stKey (with the IP
// header's offset at stL3 when p reflects), R9 = the UDP header, R8 =
// data_end, R6 = the sequence; a frame that is not a test packet jumps to
// label "other". The receiver's counting program and the afxdp method's
// redirect program (redirectProgram) both begin with it. In C terms:
//
//	parse Ethernet, up to 2 VLAN tags, IPv4 (any ihl, not a later
//	fragment) or IPv6 (next header UDP), UDP; no pktgen magic -> other
func parseTest(p xdpParams) asm.Instructions {
	var in asm.Instructions
	add := func(i ...asm.Instruction) { in = append(in, i...) }
	// The receive queue (struct xdp_md's rx_queue_index), for the spread.
	add(
		asm.LoadMem(asm.R2, asm.R1, 16, asm.Word),
		asm.StoreMem(asm.RFP, stQueue, asm.R2, asm.Word),
	)
	// Ethernet. R8 = data_end, R9 = cursor, R4 = EtherType.
	if p.reflect >= 0 {
		add(asm.StoreMem(asm.RFP, stCtx, asm.R1, asm.DWord))
	}
	add(
		asm.LoadMem(asm.R8, asm.R1, 4, asm.Word),
		asm.LoadMem(asm.R9, asm.R1, 0, asm.Word),
		asm.Mov.Reg(asm.R2, asm.R9),
		asm.Add.Imm(asm.R2, 14),
		asm.JGT.Reg(asm.R2, asm.R8, "other"),
		asm.LoadMem(asm.R4, asm.R9, 12, asm.Half),
		asm.Add.Imm(asm.R9, 14),
	)
	for i := 0; i < maxVLANs; i++ {
		tag := fmt.Sprintf("tag%d", i)
		add(
			asm.JEq.Imm(asm.R4, be16(etherVLAN), tag),
			asm.JNE.Imm(asm.R4, be16(etherQinQ), "l3"),
			asm.Mov.Reg(asm.R2, asm.R9).WithSymbol(tag),
			asm.Add.Imm(asm.R2, 4),
			asm.JGT.Reg(asm.R2, asm.R8, "other"),
			asm.LoadMem(asm.R4, asm.R9, 2, asm.Half),
			asm.Add.Imm(asm.R9, 4),
		)
	}
	// The key, zeroed.
	add(asm.Mov.Imm(asm.R3, 0).WithSymbol("l3"))
	for off := int16(stKey); off < 0; off += 8 {
		add(asm.StoreMem(asm.RFP, off, asm.R3, asm.DWord))
	}
	if p.reflect >= 0 {
		// The IP header's offset (R1 is still the context).
		add(
			asm.LoadMem(asm.R2, asm.R1, 0, asm.Word),
			asm.Mov.Reg(asm.R3, asm.R9),
			asm.Sub.Reg(asm.R3, asm.R2),
			asm.StoreMem(asm.RFP, stL3, asm.R3, asm.DWord),
		)
	}
	add(
		asm.JEq.Imm(asm.R4, be16(etherIPv4), "ipv4"),
		asm.JEq.Imm(asm.R4, be16(etherIPv6), "ipv6"),
		asm.Ja.Label("other"),
	)
	// IPv4: R2 = header length in bytes (20..60).
	add(
		asm.Mov.Reg(asm.R2, asm.R9).WithSymbol("ipv4"),
		asm.Add.Imm(asm.R2, ipv4MinHdr),
		asm.JGT.Reg(asm.R2, asm.R8, "other"),
		asm.LoadMem(asm.R2, asm.R9, 0, asm.Byte),
		asm.Mov.Reg(asm.R3, asm.R2),
		asm.And.Imm(asm.R3, 0xf0),
		asm.JNE.Imm(asm.R3, 0x40, "other"),
		asm.And.Imm(asm.R2, 0x0f),
		asm.JLT.Imm(asm.R2, 5, "other"),
		asm.LSh.Imm(asm.R2, 2),
		asm.LoadMem(asm.R3, asm.R9, 9, asm.Byte),
		asm.JNE.Imm(asm.R3, protoUDP, "other"),
		asm.LoadMem(asm.R3, asm.R9, 6, asm.Half),
		asm.And.Imm(asm.R3, be16(0x1fff)),
		asm.JNE.Imm(asm.R3, 0, "other"),
		asm.StoreImm(asm.RFP, stKey+10, 0xffff, asm.Half),
		asm.LoadMem(asm.R3, asm.R9, 12, asm.Word),
		asm.StoreMem(asm.RFP, stKey+12, asm.R3, asm.Word),
		asm.StoreImm(asm.RFP, stKey+16+10, 0xffff, asm.Half),
		asm.LoadMem(asm.R3, asm.R9, 16, asm.Word),
		asm.StoreMem(asm.RFP, stKey+16+12, asm.R3, asm.Word),
		asm.Add.Reg(asm.R9, asm.R2),
		asm.Ja.Label("udp"),
	)
	// IPv6.
	add(
		asm.Mov.Reg(asm.R2, asm.R9).WithSymbol("ipv6"),
		asm.Add.Imm(asm.R2, ipv6Hdr),
		asm.JGT.Reg(asm.R2, asm.R8, "other"),
		asm.LoadMem(asm.R3, asm.R9, 0, asm.Byte),
		asm.And.Imm(asm.R3, 0xf0),
		asm.JNE.Imm(asm.R3, 0x60, "other"),
		asm.LoadMem(asm.R3, asm.R9, 6, asm.Byte),
		asm.JNE.Imm(asm.R3, protoUDP, "other"),
	)
	for i := int16(0); i < 4; i++ { // src and dst, 32 bytes from offset 8
		add(
			asm.LoadMem(asm.R3, asm.R9, 8+8*i, asm.DWord),
			asm.StoreMem(asm.RFP, stKey+8*i, asm.R3, asm.DWord),
		)
	}
	add(asm.Add.Imm(asm.R9, ipv6Hdr))
	// UDP and the pktgen header: R6 = sequence.
	add(
		asm.Mov.Reg(asm.R2, asm.R9).WithSymbol("udp"),
		asm.Add.Imm(asm.R2, udpHdr+pktgen.HeaderLen),
		asm.JGT.Reg(asm.R2, asm.R8, "other"),
		asm.LoadMem(asm.R3, asm.R9, 2, asm.Half),
		asm.StoreMem(asm.RFP, stKey+32, asm.R3, asm.Half),
		asm.LoadMem(asm.R3, asm.R9, udpHdr, asm.Word),
		asm.JNE.Imm32(asm.R3, be32(pktgen.Magic), "other"),
		asm.LoadMem(asm.R6, asm.R9, udpHdr+4, asm.Word),
		asm.HostTo(asm.BE, asm.R6, asm.Word),
	)
	return in
}

// once reports whether the program counts latency streams (the reflected
// ports) apart from the load: when the load's frames are sent several
// times (repeats) or numbered in steps (stride) and a latency stream's
// are not (geometry.once).
func (p xdpParams) once() bool {
	return p.reflect >= 0 && p.g.once() != p.g
}

// onceCheck looks the packet's UDP destination port up in the reflect
// map (when p reflects) and keeps the answer at stOnce: a latency stream,
// reflected at "verdict" and counted once per sequence (geometry.once),
// and its span of a lap at stLap (p.once). In C terms:
//
//	once = reflect[dst port] != NULL; lap = 2^(once ? g.once() : g).wireBits()
func onceCheck(p xdpParams) asm.Instructions {
	if p.reflect < 0 {
		return nil
	}
	is := lookup(p.reflect, stKey+32) // the key's port, network order
	add := func(i ...asm.Instruction) { is = append(is, i...) }
	add(
		asm.Mov.Imm(asm.R1, 0),
		asm.JEq.Imm(asm.R0, 0, "once"),
		asm.Mov.Imm(asm.R1, 1),
		asm.StoreMem(asm.RFP, stOnce, asm.R1, asm.Word).WithSymbol("once"),
	)
	if !p.once() {
		return is
	}
	add(
		asm.LoadImm(asm.R2, int64(1)<<p.g.wireBits(), asm.DWord),
		asm.JEq.Imm(asm.R1, 0, "lap"),
		asm.LoadImm(asm.R2, int64(1)<<p.g.once().wireBits(), asm.DWord),
		asm.StoreMem(asm.RFP, stLap, asm.R2, asm.DWord).WithSymbol("lap"),
	)
	return is
}

// xdpProgram is the receiver's XDP program. In C terms:
//
//	parse Ethernet, up to 2 VLAN tags, IPv4 (any ihl, not a later
//	fragment) or IPv6 (next header UDP), UDP; no pktgen magic -> other
//	key = {src, dst, dport}
//	l = &last[hash(key) % 8] (per CPU); l->key == key && l->slot1 ->
//	  slot = l->slot1-1
//	else: slot = streams[key], or a new slot from atomic meta[0]++
//	  inserted with BPF_NOEXIST (on failure, look up again: another CPU
//	  inserted it); slot >= maxStreams -> overflow; l = {key, slot+1}
//	c = &counts[slot] (per CPU: plain adds, summed by Go); c->received++
//	c->first_ns == 0 -> c->first_ns = bpf_ktime_get_ns()
//	h = heads[slot] (shared by all CPUs: the stream's head, see headStep)
//	w, seq = unwrap(wire seq, h) (geometry.unwrap; a reflected port's
//	  stream, a latency stream, on geometry.once: no stride, one copy);
//	  seq == 0 -> c->zero++
//	p = &seqs[slot*N + w%N] (shared by all CPUs)
//	up to casTries times (geometry.mark):
//	  old = *p; tag = old>>32
//	  old == 0 || tag older than w -> new = w<<32 | unit (evict)
//	  tag newer -> c->late++, done
//	  else lane full (bit set / counter at repeats) -> c->dups++, done;
//	    new = old + unit (copy = lane was not 0)
//	  cmpxchg(p, old, new) == old -> recorded
//	every try lost -> c->unrecorded++
//	recorded, first copy: c->unique++; seq < c->max_seq ? c->reordered++
//	  : c->max_seq = seq; a further copy: c->max_seq = max(..);
//	  then (int64)(w - h) > headStep -> heads[slot] = w (geometry.mark's
//	  advance); and when it evicted a word (old != 0): a full one that
//	  follows this CPU's run of the slot (runs[slot], per CPU) extends
//	  it; another full one sends that run to Go and starts it again; any
//	  other goes to Go as {old, w} (geometry.evicted): ringbuf_output to
//	  evicted, waking nobody (Go polls); no room -> percpu[2]++
//	reflect[dst port] -> swapped and sent back (reflection), XDP_TX
//	return pass ? XDP_PASS : XDP_DROP
//	other: percpu[0]++, XDP_PASS; overflow: percpu[1]++, verdict
//
// The only atomic on the path of a test packet of a known stream is the
// window word's compare-and-swap: duplicates are exact across CPUs (the
// ring buffer's record, which takes its lock, is written only for an
// evicted word with loss or a run of full words that broke). A try
// is lost only when another CPU changed the same word (the same stream,
// sequences sharing one window word: within 32 of each other, 2 with
// Repeats > 1) between this CPU's load and its
// compare-and-swap, a few instructions; losing all casTries in a row is
// counted (unrecorded), never dropped silently. Packets of a stream this
// CPU saw recently (all of them, with up to a few streams per RX queue)
// skip the hash map: a small direct-mapped per-CPU cache of streams
// answers. max_seq and reordered are per CPU: reordered is "arrived after
// a higher sequence of the same stream on the same CPU", as the AF_PACKET
// method counts it per ring; Go takes the highest max_seq, which is then
// exact, and sums unique, so missing = max_seq - unique is exact.
func xdpProgram(p xdpParams) (asm.Instructions, error) {
	if p.g.words() > 1<<30 || p.maxStreams > 1<<31-1 {
		return nil, fmt.Errorf("xdp program: %d streams of %d words do not fit the instruction set's 32-bit immediates", p.maxStreams, p.g.words())
	}
	verdict := int32(xdpDrop)
	if p.pass {
		verdict = xdpPass
	}
	var in asm.Instructions
	add := func(i ...asm.Instruction) { in = append(in, i...) }
	addN := func(is asm.Instructions) { in = append(in, is...) }

	addN(parseTest(p))
	addN(onceCheck(p))
	if k := p.g.stride; k > 0 {
		// The sequence it counts as (geometry.wire): 32-bit arithmetic,
		// so that it wraps with the wire's. A latency stream's is its
		// wire sequence (geometry.once).
		if p.reflect >= 0 {
			add(
				asm.LoadMem(asm.R2, asm.RFP, stOnce, asm.Word),
				asm.JNE.Imm(asm.R2, 0, "counted"),
			)
		}
		add(
			asm.Add.Imm32(asm.R6, int32(1)<<k-1),
			asm.RSh.Imm32(asm.R6, int32(k)),
			asm.Mov.Reg(asm.R6, asm.R6).WithSymbol("counted"), // a landing place
		)
	}
	if p.lat >= 0 {
		// The send time: tv_sec·10^6 + tv_usec.
		add(
			asm.LoadMem(asm.R3, asm.R9, udpHdr+8, asm.Word),
			asm.HostTo(asm.BE, asm.R3, asm.Word),
			asm.Mul.Imm(asm.R3, 1000000),
			asm.LoadMem(asm.R4, asm.R9, udpHdr+12, asm.Word),
			asm.HostTo(asm.BE, asm.R4, asm.Word),
			asm.Add.Reg(asm.R3, asm.R4),
			asm.StoreMem(asm.RFP, stSent, asm.R3, asm.DWord),
		)
	}
	// Stream slot: R7. This CPU's recent streams first: entry
	// (xor of the key's words) * 2^64/phi >> lastShift.
	add(asm.LoadMem(asm.R1, asm.RFP, stKey, asm.DWord))
	for off := int16(8); off < 40; off += 8 {
		add(
			asm.LoadMem(asm.R2, asm.RFP, stKey+off, asm.DWord),
			asm.Xor.Reg(asm.R1, asm.R2),
		)
	}
	add(
		asm.LoadImm(asm.R2, -0x61c8864680b583eb, asm.DWord), // 0x9e3779b97f4a7c15
		asm.Mul.Reg(asm.R1, asm.R2),
		asm.RSh.Imm(asm.R1, lastShift),
		asm.StoreMem(asm.RFP, stLast, asm.R1, asm.Word),
	)
	addN(lookup(p.last, stLast))
	add(asm.JEq.Imm(asm.R0, 0, "lookup"))
	for off := int16(0); off < 40; off += 8 {
		add(
			asm.LoadMem(asm.R1, asm.R0, off, asm.DWord),
			asm.LoadMem(asm.R2, asm.RFP, stKey+off, asm.DWord),
			asm.JNE.Reg(asm.R1, asm.R2, "lookup"),
		)
	}
	add(
		asm.LoadMem(asm.R7, asm.R0, lastSlot, asm.Word),
		asm.JEq.Imm(asm.R7, 0, "lookup"),
		asm.Sub.Imm(asm.R7, 1),
		asm.Ja.Label("have"),
	)
	// The hash map, or a new slot.
	addN(at("lookup", lookup(p.streams, stKey)))
	add(
		asm.JEq.Imm(asm.R0, 0, "alloc"),
		asm.LoadMem(asm.R7, asm.R0, 0, asm.Word),
		asm.Ja.Label("fill"),
		asm.StoreImm(asm.RFP, stZero, 0, asm.Word).WithSymbol("alloc"),
	)
	addN(lookup(p.meta, stZero))
	add(
		asm.JEq.Imm(asm.R0, 0, "overflow"),
		asm.Mov.Imm(asm.R1, 1),
		atomicFetch(asm.FetchAdd, asm.R0, asm.R1, 0),
		asm.JGE.Imm(asm.R1, int32(p.maxStreams), "overflow"),
		asm.Mov.Reg(asm.R7, asm.R1),
		asm.StoreMem(asm.RFP, stNewSlot, asm.R7, asm.Word),
		asm.LoadMapPtr(asm.R1, p.streams),
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, stKey),
		asm.Mov.Reg(asm.R3, asm.RFP),
		asm.Add.Imm(asm.R3, stNewSlot),
		asm.Mov.Imm(asm.R4, 1), // BPF_NOEXIST
		asm.FnMapUpdateElem.Call(),
		asm.JEq.Imm(asm.R0, 0, "fill"),
	)
	addN(lookup(p.streams, stKey)) // -EEXIST: another CPU won; or the map is full
	add(
		asm.JEq.Imm(asm.R0, 0, "overflow"),
		asm.LoadMem(asm.R7, asm.R0, 0, asm.Word),
	)
	// Remember the stream in its entry of this CPU's recent streams.
	addN(at("fill", lookup(p.last, stLast)))
	add(asm.JEq.Imm(asm.R0, 0, "have"))
	for off := int16(0); off < 40; off += 8 {
		add(
			asm.LoadMem(asm.R1, asm.RFP, stKey+off, asm.DWord),
			asm.StoreMem(asm.R0, off, asm.R1, asm.DWord),
		)
	}
	add(
		asm.Mov.Reg(asm.R1, asm.R7),
		asm.Add.Imm(asm.R1, 1),
		asm.StoreMem(asm.R0, lastSlot, asm.R1, asm.Word),
	)
	// This CPU's counters of the slot: R8. R9 = late.
	add(asm.StoreMem(asm.RFP, stSlot, asm.R7, asm.Word).WithSymbol("have"))
	addN(lookup(p.counts, stSlot))
	add(
		asm.JEq.Imm(asm.R0, 0, "overflow"),
		asm.Mov.Reg(asm.R8, asm.R0),
	)
	addN(inc(asm.R8, slotReceived))
	// The stream's packets on this receive queue (queues from
	// SpreadQueues-1 up share the last count): queues[slot][q]++, per CPU.
	addN(lookup(p.queues, stSlot))
	add(
		asm.JEq.Imm(asm.R0, 0, "firstns"),
		asm.LoadMem(asm.R2, asm.RFP, stQueue, asm.Word),
		asm.JLT.Imm(asm.R2, SpreadQueues, "queue"),
		asm.Mov.Imm(asm.R2, SpreadQueues-1),
		asm.LSh.Imm(asm.R2, 3).WithSymbol("queue"),
		asm.Add.Reg(asm.R0, asm.R2),
	)
	addN(inc(asm.R0, 0))
	// The first arrival, on CLOCK_MONOTONIC.
	add(
		asm.LoadMem(asm.R1, asm.R8, slotFirstNs, asm.DWord).WithSymbol("firstns"),
		asm.JNE.Imm(asm.R1, 0, "latency"),
		asm.FnKtimeGetNs.Call(),
		asm.StoreMem(asm.R8, slotFirstNs, asm.R0, asm.DWord),
	)
	if p.lat >= 0 {
		addN(latencyRecord(p))
	} else {
		add(asm.Ja.Label("unwrap").WithSymbol("latency"))
	}
	// Unwrap the wire sequence (R6) to the lap nearest the stream's
	// head (a word index shared by all CPUs, not this CPU's max_seq: a
	// CPU that first sees the stream past 2^32 takes its lap): R3 = the
	// word's absolute index, then R6 = the 64-bit sequence.
	// R5 = 2^wb, the span of a lap in words: the table's, or the
	// latency stream's (onceCheck) where they differ.
	lap := asm.LoadImm(asm.R5, int64(1)<<p.g.wireBits(), asm.DWord)
	if p.once() {
		lap = asm.LoadMem(asm.R5, asm.RFP, stLap, asm.DWord)
	}
	addN(at("unwrap", lookup(p.heads, stSlot)))
	add(
		asm.JEq.Imm(asm.R0, 0, "unrecorded"),
		asm.LoadMem(asm.R3, asm.R0, 0, asm.DWord),
		asm.StoreMem(asm.RFP, stHead, asm.R3, asm.DWord),
		asm.Mov.Reg(asm.R2, asm.R6),
		asm.RSh.Imm(asm.R2, int32(p.g.shift)),
		asm.Mov.Reg(asm.R4, asm.R2),
		asm.Sub.Reg(asm.R4, asm.R3),
		lap,
		asm.Sub.Imm(asm.R5, 1),
		asm.And.Reg(asm.R4, asm.R5), // the distance from the head, modulo a lap
		asm.Add.Reg(asm.R3, asm.R4),
		asm.Add.Imm(asm.R5, 1),
		asm.RSh.Imm(asm.R5, 1), // half a lap
		asm.JLT.Reg(asm.R4, asm.R5, "lapped"),
		asm.LSh.Imm(asm.R5, 1),
		asm.Sub.Reg(asm.R3, asm.R5),
		asm.JSGE.Imm(asm.R3, 0, "lapped"),
		asm.Add.Reg(asm.R3, asm.R5),
		asm.StoreMem(asm.RFP, stW, asm.R3, asm.DWord).WithSymbol("lapped"),
		asm.Mov.Reg(asm.R1, asm.R3),
		asm.LSh.Imm(asm.R1, int32(p.g.shift)),
		asm.And.Imm(asm.R6, int32(1)<<p.g.shift-1),
		asm.Or.Reg(asm.R6, asm.R1),
		asm.JEq.Imm(asm.R6, 0, "zero"),
		// The window word: seqs[slot*N + w%N].
		asm.Mov.Reg(asm.R1, asm.R7),
		asm.Mul.Imm(asm.R1, int32(p.g.words())),
		asm.And.Imm(asm.R3, int32(p.g.mask)),
		asm.Add.Reg(asm.R1, asm.R3),
		asm.StoreMem(asm.RFP, stWord, asm.R1, asm.Word),
	)
	addN(lookup(p.seqs, stWord))
	add(
		asm.JEq.Imm(asm.R0, 0, "unrecorded"),
		asm.Mov.Reg(asm.R9, asm.R0),
		// R7 = the word's tag << 32 (the slot is no longer needed), R5 =
		// the lane's unit.
		asm.LoadMem(asm.R7, asm.RFP, stW, asm.DWord),
		asm.LSh.Imm(asm.R7, 32),
		asm.Mov.Reg(asm.R2, asm.R6),
		asm.And.Imm(asm.R2, int32(1)<<p.g.shift-1),
	)
	repeats := p.g.repeats > 1
	if repeats {
		add(asm.LSh.Imm(asm.R2, 4))
	}
	add(
		asm.Mov.Imm(asm.R5, 1),
		asm.LSh.Reg(asm.R5, asm.R2),
		asm.StoreImm(asm.RFP, stOld, 0, asm.Word), // stOld = 0 (a store of an immediate is at most 32 bits)
		asm.StoreImm(asm.RFP, stOld+4, 0, asm.Word),
	)
	for i := 0; i < casTries; i++ {
		evict, cas := fmt.Sprintf("evict%d", i), fmt.Sprintf("cas%d", i)
		add(
			asm.LoadMem(asm.R2, asm.R9, 0, asm.DWord),
			asm.JEq.Imm(asm.R2, 0, evict),
			asm.Mov.Reg(asm.R3, asm.R2),
			asm.RSh.Imm(asm.R3, 32),
			asm.Mov.Reg(asm.R4, asm.R7),
			asm.RSh.Imm(asm.R4, 32),
			asm.Sub.Reg(asm.R4, asm.R3),
			asm.LSh.Imm(asm.R4, 32),
			asm.ArSh.Imm(asm.R4, 32),
			asm.JSGT.Imm(asm.R4, 0, evict),
			asm.JSLT.Imm(asm.R4, 0, "late"),
		)
		if repeats {
			// R4 = the lane's count before this copy; a latency
			// stream's (stOnce) holds one copy.
			many := fmt.Sprintf("many%d", i)
			add(
				asm.Mov.Reg(asm.R4, asm.R2),
				asm.Mov.Reg(asm.R3, asm.R6),
				asm.And.Imm(asm.R3, 1),
				asm.LSh.Imm(asm.R3, 4),
				asm.RSh.Reg(asm.R4, asm.R3),
				asm.And.Imm(asm.R4, 0xffff),
			)
			if p.reflect >= 0 {
				add(
					asm.LoadMem(asm.R3, asm.RFP, stOnce, asm.Word),
					asm.JEq.Imm(asm.R3, 0, many),
					asm.JNE.Imm(asm.R4, 0, "dup"),
				)
			}
			add(
				asm.JGE.Imm(asm.R4, int32(p.g.repeats), "dup").WithSymbol(many),
				asm.Mov.Reg(asm.R1, asm.R2),
				asm.Add.Reg(asm.R1, asm.R5),
				asm.StoreImm(asm.RFP, stOld, 0, asm.Word), // stOld = 0 (a store of an immediate is at most 32 bits)
				asm.StoreImm(asm.RFP, stOld+4, 0, asm.Word),
				asm.Ja.Label(cas),
			)
		} else {
			add(
				asm.Mov.Reg(asm.R1, asm.R2),
				asm.And.Reg(asm.R1, asm.R5),
				asm.JNE.Imm(asm.R1, 0, "dup"),
				asm.Mov.Reg(asm.R1, asm.R2),
				asm.Or.Reg(asm.R1, asm.R5),
				asm.Mov.Imm(asm.R4, 0),
				asm.StoreImm(asm.RFP, stOld, 0, asm.Word), // stOld = 0 (a store of an immediate is at most 32 bits)
				asm.StoreImm(asm.RFP, stOld+4, 0, asm.Word),
				asm.Ja.Label(cas),
			)
		}
		add(
			asm.Mov.Reg(asm.R1, asm.R7).WithSymbol(evict),
			asm.Or.Reg(asm.R1, asm.R5),
			asm.Mov.Imm(asm.R4, 0),
			asm.StoreMem(asm.RFP, stOld, asm.R2, asm.DWord),
			asm.Mov.Reg(asm.R0, asm.R2).WithSymbol(cas),
			atomicFetch(asm.CmpXchg, asm.R9, asm.R1, 0),
			asm.JEq.Reg(asm.R0, asm.R2, "recorded"),
		)
	}
	addN(at("unrecorded", inc(asm.R8, slotUnrecorded)))
	add(asm.Ja.Label("verdict"))
	// Recorded: R4 = 0 for a first copy.
	add(
		asm.JNE.Imm(asm.R4, 0, "copy").WithSymbol("recorded"),
	)
	addN(inc(asm.R8, slotUnique))
	add(
		asm.LoadMem(asm.R1, asm.R8, slotMaxSeq, asm.DWord),
		asm.JLT.Reg(asm.R6, asm.R1, "reordered"),
		asm.StoreMem(asm.R8, slotMaxSeq, asm.R6, asm.DWord),
		asm.Ja.Label("advance"),
	)
	addN(at("reordered", inc(asm.R8, slotReordered)))
	add(
		asm.Ja.Label("advance"),
		asm.LoadMem(asm.R1, asm.R8, slotMaxSeq, asm.DWord).WithSymbol("copy"),
		asm.JGE.Reg(asm.R1, asm.R6, "advance"),
		asm.StoreMem(asm.R8, slotMaxSeq, asm.R6, asm.DWord),
		// The head moves to w when w is more than headStep past it (a
		// plain 64-bit store: CPUs racing here store words within the
		// window of each other, which the head's slack absorbs).
		asm.LoadMem(asm.R1, asm.RFP, stW, asm.DWord).WithSymbol("advance"),
		asm.LoadMem(asm.R2, asm.RFP, stHead, asm.DWord),
		asm.Sub.Reg(asm.R1, asm.R2),
		asm.JSLE.Imm(asm.R1, headStep, "emit"),
	)
	addN(lookup(p.heads, stSlot))
	add(
		asm.JEq.Imm(asm.R0, 0, "emit"),
		asm.LoadMem(asm.R1, asm.RFP, stW, asm.DWord),
		asm.StoreMem(asm.R0, 0, asm.R1, asm.DWord),
		// An evicted word (stOld, not 0): T = its absolute index.
		asm.LoadMem(asm.R1, asm.RFP, stOld, asm.DWord).WithSymbol("emit"),
		asm.JEq.Imm(asm.R1, 0, "verdict"),
		asm.Mov.Reg(asm.R2, asm.R1),
		asm.RSh.Imm(asm.R2, 32),
		asm.LoadMem(asm.R3, asm.RFP, stW, asm.DWord),
		asm.Mov.Reg(asm.R4, asm.R3),
		asm.Sub.Reg(asm.R4, asm.R2),
		asm.LSh.Imm(asm.R4, 32),
		asm.RSh.Imm(asm.R4, 32),
		asm.Sub.Reg(asm.R3, asm.R4),
		// Full (every lane seen; sequence 0 of word 0 counts as seen)?
		asm.Mov.Reg(asm.R4, asm.R1),
		asm.JNE.Imm(asm.R3, 0, "fullcheck"),
		asm.Or.Imm(asm.R4, 1),
	)
	if repeats {
		add(
			asm.Mov.Reg(asm.R5, asm.R4).WithSymbol("fullcheck"),
			asm.And.Imm(asm.R5, 0xffff),
			asm.JEq.Imm(asm.R5, 0, "word"),
			asm.Mov.Reg(asm.R5, asm.R4),
			asm.RSh.Imm(asm.R5, 16),
			asm.And.Imm(asm.R5, 0xffff),
			asm.JEq.Imm(asm.R5, 0, "word"),
		)
	} else {
		add(
			asm.LSh.Imm(asm.R4, 32).WithSymbol("fullcheck"),
			asm.RSh.Imm(asm.R4, 32),
			asm.LoadImm(asm.R5, 0xffffffff, asm.DWord),
			asm.JNE.Reg(asm.R4, asm.R5, "word"),
		)
	}
	// A full word extends this CPU's run of the slot when it follows it
	// (no atomic, no record); else the run goes to Go and starts again
	// here.
	add(
		asm.LSh.Imm(asm.R3, int32(p.g.shift)),
		asm.StoreMem(asm.RFP, stBase, asm.R3, asm.DWord),
	)
	addN(lookup(p.runs, stSlot))
	add(
		asm.JEq.Imm(asm.R0, 0, "word"),
		asm.LoadMem(asm.R1, asm.R0, 8, asm.DWord),
		asm.LoadMem(asm.R3, asm.RFP, stBase, asm.DWord),
		asm.JNE.Reg(asm.R1, asm.R3, "move"),
		asm.Add.Imm(asm.R3, int32(1)<<p.g.shift),
		asm.StoreMem(asm.R0, 8, asm.R3, asm.DWord),
		asm.Ja.Label("verdict"),
		asm.LoadMem(asm.R2, asm.R0, 0, asm.DWord).WithSymbol("move"),
		asm.StoreMem(asm.R0, 0, asm.R3, asm.DWord),
		asm.Add.Imm(asm.R3, int32(1)<<p.g.shift),
		asm.StoreMem(asm.R0, 8, asm.R3, asm.DWord),
		asm.JGE.Reg(asm.R2, asm.R1, "verdict"), // the run was empty
		asm.StoreMem(asm.RFP, stRec+8, asm.R2, asm.DWord),
		asm.StoreMem(asm.RFP, stRec+16, asm.R1, asm.DWord),
		asm.StoreImm(asm.RFP, stRec+4, evictedRun, asm.Word),
		asm.Ja.Label("output"),
		// Any other word goes to Go as it was: {slot, 0, old, w}.
		asm.LoadMem(asm.R1, asm.RFP, stOld, asm.DWord).WithSymbol("word"),
		asm.StoreMem(asm.RFP, stRec+8, asm.R1, asm.DWord),
		asm.LoadMem(asm.R1, asm.RFP, stW, asm.DWord),
		asm.StoreMem(asm.RFP, stRec+16, asm.R1, asm.DWord),
		asm.StoreImm(asm.RFP, stRec+4, evictedWord, asm.Word),
		asm.LoadMem(asm.R1, asm.RFP, stSlot, asm.Word).WithSymbol("output"),
		asm.StoreMem(asm.RFP, stRec, asm.R1, asm.Word),
		asm.LoadMapPtr(asm.R1, p.evicted),
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, stRec),
		asm.Mov.Imm(asm.R3, evictedSize),
		asm.Mov.Imm(asm.R4, bpfRBNoWakeup), // Go polls (evictedPoll): a wakeup per record cost ~25 ns a packet
		asm.FnRingbufOutput.Call(),
		asm.JEq.Imm(asm.R0, 0, "verdict"),
		asm.StoreImm(asm.RFP, stCPUKey, cpuUnlisted, asm.Word),
	)
	addN(lookup(p.percpu, stCPUKey))
	add(asm.JEq.Imm(asm.R0, 0, "verdict"))
	addN(inc(asm.R0, 0))
	add(asm.Ja.Label("verdict"))
	addN(at("late", inc(asm.R8, slotLate)))
	add(asm.Ja.Label("verdict"))
	addN(at("dup", inc(asm.R8, slotDups)))
	add(asm.Ja.Label("verdict"))
	addN(at("zero", inc(asm.R8, slotZero)))
	// Every counted packet comes to "verdict"; an overflow goes to final.
	final := "verdict"
	if p.reflect >= 0 {
		final = "final"
		addN(at("verdict", reflection(p, final)))
	}
	add(asm.Mov.Imm(asm.R0, verdict).WithSymbol(final), asm.Return())
	// Per-CPU counters: overflow (test packets of streams beyond the
	// limit) and other (no pktgen header: always passed on).
	for _, c := range []struct {
		label, after string
		index        int64
	}{{"overflow", final, cpuOverflow}, {"other", "pass", cpuOther}} {
		add(asm.StoreImm(asm.RFP, stCPUKey, c.index, asm.Word).WithSymbol(c.label))
		addN(lookup(p.percpu, stCPUKey))
		add(asm.JEq.Imm(asm.R0, 0, c.after))
		addN(inc(asm.R0, 0))
		add(asm.Ja.Label(c.after))
	}
	add(asm.Mov.Imm(asm.R0, xdpPass).WithSymbol("pass"), asm.Return())
	return in, nil
}
