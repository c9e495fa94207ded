package bpftest

import (
	"os"
	"strings"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
)

// loadsPrograms skips t unless it may load BPF programs (root).
func loadsPrograms(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: loads a BPF program")
	}
}

// The probe answers on this kernel: supported, or missing by name.
func TestHaveXDPLiveFrames(t *testing.T) {
	loadsPrograms(t)
	SkipIfNotSupported(t, HaveXDPLiveFrames())
}

// A program the verifier rejects (it reads R5 before anything set it)
// fails the test with the verifier's log: it is no missing feature.
func TestVerifierRejectionFails(t *testing.T) {
	loadsPrograms(t)
	_, err := ebpf.NewProgram(&ebpf.ProgramSpec{Type: ebpf.XDP, License: "GPL",
		Instructions: asm.Instructions{asm.Mov.Reg(asm.R0, asm.R5), asm.Return()}})
	var f fakeTB
	SkipIfNotSupported(&f, err)
	if f.skipped != "" || !strings.Contains(f.failed, "verifier log") || !strings.Contains(f.failed, "R5 !read_ok") {
		t.Errorf("load error %v: skipped %q, failed %q; want a failure with the verifier's log", err, f.skipped, f.failed)
	}
}
