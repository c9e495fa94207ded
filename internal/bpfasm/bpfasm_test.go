package bpfasm

import (
	"testing"

	"github.com/cilium/ebpf/asm"
)

func TestAtomicFetchEncoding(t *testing.T) {
	for _, tt := range []struct {
		op   asm.AtomicOp
		want int64
	}{{asm.FetchAdd, 0x01}, {asm.FetchOr, 0x41}, {asm.CmpXchg, 0xf1}} {
		if got := Imm(AtomicFetch(tt.op, asm.R0, asm.R1, 0)); got != tt.want {
			t.Errorf("%v: imm %#x, want %#x", tt.op, got, tt.want)
		}
	}
}
