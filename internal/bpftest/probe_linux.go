package bpftest

import (
	"errors"
	"fmt"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"golang.org/x/sys/unix"
)

// HaveXDPLiveFrames says whether the kernel runs XDP programs in
// BPF_PROG_RUN's live-frame mode (BPF_F_TEST_XDP_LIVE_FRAMES, Linux 5.18+):
// nil when it does, an error wrapping ebpf.ErrNotSupported when the kernel
// refuses the flag (EINVAL, what kernels before 5.18 return for any flag)
// or refuses it to this process (EPERM) while it runs the same frame
// without it, any other error as it came. It loads a program that drops its one frame
// and runs it once on the calling thread's namespace's loopback, so it
// sends nothing.
func HaveXDPLiveFrames() error {
	prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{Name: "lr_probe_live", Type: ebpf.XDP, License: "GPL",
		Instructions: asm.Instructions{asm.Mov.Imm(asm.R0, 1 /* XDP_DROP */), asm.Return()}})
	if err != nil {
		return fmt.Errorf("probe XDP live frames: load a program: %w", err)
	}
	defer prog.Close()
	// The same run without the flag first: an EINVAL then is about
	// the run itself (the frame, the program), not a missing feature.
	if _, err := prog.Run(&ebpf.RunOptions{Data: make([]byte, 64), Repeat: 1}); err != nil {
		return fmt.Errorf("probe XDP live frames: run without the flag: %w", err)
	}
	_, err = prog.Run(&ebpf.RunOptions{Data: make([]byte, 64), Repeat: 1, Flags: unix.BPF_F_TEST_XDP_LIVE_FRAMES})
	switch {
	case err == nil:
		return nil
	case errors.Is(err, unix.EINVAL):
		return fmt.Errorf("BPF_PROG_RUN in XDP live-frame mode (BPF_F_TEST_XDP_LIVE_FRAMES, Linux 5.18+): %w: %w", ebpf.ErrNotSupported, err)
	case errors.Is(err, unix.EPERM):
		// It ran the same program without the flag: the permission to
		// run programs is there, and the live mode alone is refused (a
		// sandbox's rule: the CI machine of 2026-12-05 refuses it to root).
		return fmt.Errorf("BPF_PROG_RUN in XDP live-frame mode refused to this process, which runs the same program without it: %w here: %w", ebpf.ErrNotSupported, err)
	}
	return fmt.Errorf("probe XDP live frames: run: %w", err)
}
