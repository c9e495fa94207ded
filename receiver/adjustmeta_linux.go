//go:build linux

package receiver

import (
	"errors"
	"fmt"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"golang.org/x/sys/unix"
)

// probeAdjustMeta learns whether this kernel lets XDP programs call
// bpf_xdp_adjust_meta, the helper the redirect program makes room for
// its arrival stamp with: nil when it does; ebpf.ErrNotSupported when it
// refuses (a hardened build: the CI machine of 2026-12-05), which the
// kernel says by refusing (EINVAL) a program calling it after it loaded
// the same program without the call; any other error when the probe
// itself failed (no permission to load XDP programs at all, …). load
// loads a program and releases it (loadReleased; a fake in tests).
func probeAdjustMeta(load func(*ebpf.ProgramSpec) error) error {
	if err := load(adjustMetaProbe(false)); err != nil {
		return fmt.Errorf("probe bpf_xdp_adjust_meta: load an XDP program without it: %w", err)
	}
	err := load(adjustMetaProbe(true))
	switch {
	case err == nil:
		return nil
	case errors.Is(err, unix.EINVAL):
		return fmt.Errorf("bpf_xdp_adjust_meta in XDP programs (refused in a program calling it, which loads without the call): %w here: %w", ebpf.ErrNotSupported, err)
	}
	return fmt.Errorf("probe bpf_xdp_adjust_meta: load an XDP program calling it: %w", err)
}

// adjustMetaProbe is the probe's program: XDP_PASS, after
// bpf_xdp_adjust_meta(ctx, -stampLen) as the redirect program calls it
// when call is set.
func adjustMetaProbe(call bool) *ebpf.ProgramSpec {
	var in asm.Instructions
	if call {
		in = append(in, asm.Mov.Imm(asm.R2, -stampLen), asm.FnXdpAdjustMeta.Call())
	}
	in = append(in, asm.Mov.Imm(asm.R0, xdpPass), asm.Return())
	return &ebpf.ProgramSpec{Name: "lr_probe_meta", Type: ebpf.XDP, License: "Dual MIT/GPL", Instructions: in}
}

// loadReleased loads spec into the kernel and releases it: the probe's
// loader.
func loadReleased(spec *ebpf.ProgramSpec) error {
	p, err := ebpf.NewProgram(spec)
	if err != nil {
		return err
	}
	return p.Close()
}
