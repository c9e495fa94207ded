package bpftest

import (
	"errors"

	"github.com/cilium/ebpf"
)

// TB is the part of testing.TB that SkipIfNotSupported uses.
type TB interface {
	Helper()
	Skipf(format string, args ...any)
	Fatalf(format string, args ...any)
}

// SkipIfNotSupported returns when err is nil, skips t when err says the
// kernel lacks a feature (errors.Is(err, ebpf.ErrNotSupported)), and fails
// t on anything else: a verifier rejection (with the verifier's log, line
// by line), a permission, a bad argument.
func SkipIfNotSupported(t TB, err error) {
	t.Helper()
	if err == nil {
		return
	}
	var ve *ebpf.VerifierError
	if errors.As(err, &ve) {
		t.Fatalf("the verifier rejected the program: %v\nverifier log:\n%+v", err, ve)
		return
	}
	if errors.Is(err, ebpf.ErrNotSupported) {
		t.Skipf("the kernel lacks a feature: %v", err)
		return
	}
	t.Fatalf("%v (not a missing kernel feature: a test skips only for ebpf.ErrNotSupported)", err)
}
