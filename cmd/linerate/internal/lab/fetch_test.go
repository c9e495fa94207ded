//go:build linux

package lab

import (
	"os"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"github.com/linerate/linerate/internal/bpftest"
)

// The fetch really fetches (see fetchAdd): run a program that returns the
// old value of a counter it adds 5 to.
func TestFetchAddFetches(t *testing.T) {
	if testing.Short() {
		t.Skip("loads a BPF program")
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root: loads a BPF program")
	}
	in := asm.Instructions{
		asm.StoreImm(asm.RFP, -4, 0, asm.Word),
		asm.LoadMapPtr(asm.R1, 0).WithReference("m"),
		asm.Mov.Reg(asm.R2, asm.RFP), asm.Add.Imm(asm.R2, -4),
		asm.FnMapLookupElem.Call(),
		asm.JNE.Imm(asm.R0, 0, "ok"),
		asm.Mov.Imm(asm.R0, 99), asm.Return(),
		asm.Mov.Imm(asm.R1, 5).WithSymbol("ok"),
		fetchAdd(asm.R0, asm.R1),
		asm.Mov.Reg(asm.R0, asm.R1),
		asm.Return(),
	}
	coll, err := ebpf.NewCollection(&ebpf.CollectionSpec{
		Maps:     map[string]*ebpf.MapSpec{"m": {Type: ebpf.Array, KeySize: 4, ValueSize: 8, MaxEntries: 1}},
		Programs: map[string]*ebpf.ProgramSpec{"p": {Type: ebpf.XDP, License: "GPL", Instructions: in}},
	})
	bpftest.SkipIfNotSupported(t, err)
	defer coll.Close()
	for want := uint32(0); want <= 15; want += 5 {
		got, err := coll.Programs["p"].Run(&ebpf.RunOptions{Data: make([]byte, 64)})
		bpftest.SkipIfNotSupported(t, err)
		if got != want {
			t.Fatalf("fetch-add returned %d, want the old value %d", got, want)
		}
	}
}
