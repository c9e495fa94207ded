// Package bpfasm holds the small pieces linerate's run-time-assembled BPF
// programs share.
package bpfasm

import (
	"bytes"
	"encoding/binary"

	"github.com/cilium/ebpf/asm"
)

// Kernel encodings of the atomic fetch operations (the instruction's imm).
const (
	bpfFetch   = 0x01
	bpfAtomAdd = 0x00 | bpfFetch // BPF_ADD | BPF_FETCH
	bpfAtomOr  = 0x40 | bpfFetch // BPF_OR | BPF_FETCH
	bpfCmpXchg = 0xf0 | bpfFetch // BPF_CMPXCHG
)

// AtomicFetch emits a 64-bit atomic fetch-op (asm.FetchAdd or
// asm.FetchOr): src = atomic_fetch_op((u64 *)(dst + off), src); or, for
// asm.CmpXchg, r0 = cmpxchg((u64 *)(dst + off), r0, src) (Linux 5.12).
// cilium/ebpf v0.22.0's asm marshals every atomic instruction with imm 0
// (BPF_ADD, no BPF_FETCH): it computes the immediate before it sets it
// from the opcode, so a plain FetchAdd/FetchOr silently becomes an add
// that leaves src unchanged. The encoding is checked here and, when the
// library gets it wrong, the instruction is built as a plain atomic add
// whose stale immediate is the one wanted; it stays right once the
// library is fixed.
func AtomicFetch(op asm.AtomicOp, dst, src asm.Register, off int16) asm.Instruction {
	want := int64(bpfAtomAdd)
	switch op {
	case asm.FetchOr:
		want = bpfAtomOr
	case asm.CmpXchg:
		want = bpfCmpXchg
	}
	ins := op.Mem(dst, src, asm.DWord, off)
	if Imm(ins) == want {
		return ins
	}
	ins = asm.AddAtomic.Mem(dst, src, asm.DWord, off)
	ins.Constant = want
	return ins
}

// Imm is the immediate an instruction marshals to (-1 on error).
func Imm(ins asm.Instruction) int64 {
	// asm wants binary.LittleEndian or binary.BigEndian, not NativeEndian.
	var order binary.ByteOrder = binary.LittleEndian
	if binary.NativeEndian.Uint16([]byte{0, 1}) == 1 {
		order = binary.BigEndian
	}
	var b bytes.Buffer
	if _, err := ins.Marshal(&b, order); err != nil || b.Len() < 8 {
		return -1
	}
	return int64(order.Uint32(b.Bytes()[4:8]))
}
