//go:build linux

package pktgentest

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"golang.org/x/sys/unix"
)

// liveFrames is what this kernel said, once per test process, to a run
// of BPF_PROG_RUN in live-frame mode: nil, or its error.
var liveFrames = sync.OnceValue(func() error {
	prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{Name: "lr_live_probe", Type: ebpf.XDP, License: "GPL",
		Instructions: asm.Instructions{asm.Mov.Imm(asm.R0, 1 /* XDP_DROP */), asm.Return()}})
	if err != nil {
		return fmt.Errorf("load an XDP program that drops its frame: %v", err) // not EPERM to the caller: that is not the live mode's refusal
	}
	defer prog.Close()
	// struct xdp_md: data, data_end, data_meta, ingress_ifindex (1: the
	// namespace's loopback), rx_queue_index, egress_ifindex.
	md := [6]uint32{0, 64, 0, 1, 0, 0}
	if _, err := prog.Run(&ebpf.RunOptions{Data: make([]byte, 64), Context: md[:], Repeat: 1, Flags: unix.BPF_F_TEST_XDP_LIVE_FRAMES}); err != nil {
		return fmt.Errorf("BPF_PROG_RUN in live-frame mode (one frame, dropped): %w", err)
	}
	return nil
})

// LiveFramesRefused says whether this kernel refuses BPF_PROG_RUN's
// live-frame mode to this process with EPERM (see SkipUnlessLiveFrames),
// with that error: where it does, `auto` and `userspace` choose AF_XDP.
func LiveFramesRefused() (bool, error) {
	err := liveFrames()
	return errors.Is(err, unix.EPERM), err
}

// SkipUnlessLiveFrames skips t where the kernel refuses BPF_PROG_RUN's
// live-frame mode to this process with EPERM although it may load XDP
// programs (a sandbox's or security module's rule: the CI machine of
// 2026-12-05 refuses it to root), so the xdp backend cannot send here at
// all; any other failure of live frames fails t. The xdp backend's own
// tests run in the VM lab's guests there (TestLabVMHosts/xdp).
func SkipUnlessLiveFrames(t testing.TB) {
	t.Helper()
	err := liveFrames()
	switch {
	case err == nil:
	case errors.Is(err, unix.EPERM):
		t.Skipf("the xdp backend cannot send on this machine: the kernel refuses %v", err)
	default:
		t.Fatalf("live frames: %v", err)
	}
}
