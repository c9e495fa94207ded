package bpftest

import (
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"

	"github.com/cilium/ebpf"
)

// fakeTB records what SkipIfNotSupported did instead of doing it.
type fakeTB struct{ skipped, failed string }

func (f *fakeTB) Helper()                        {}
func (f *fakeTB) Skipf(format string, a ...any)  { f.skipped = fmt.Sprintf(format, a...) }
func (f *fakeTB) Fatalf(format string, a ...any) { f.failed = fmt.Sprintf(format, a...) }

func TestSkipIfNotSupported(t *testing.T) {
	verifier := &ebpf.VerifierError{Cause: syscall.EACCES, Log: []string{"0: (b7) r0 = 0", "R1 invalid mem access 'scalar'"}}
	for _, tt := range []struct {
		name       string
		err        error
		skip, fail string // substrings; "" = must not happen
	}{
		{"nil", nil, "", ""},
		{"not supported", fmt.Errorf("live frames: %w", ebpf.ErrNotSupported), "live frames", ""},
		{"verifier", fmt.Errorf("load program: %w", verifier), "", "R1 invalid mem access"},
		{"permission", fmt.Errorf("load program: %w", syscall.EPERM), "", "operation not permitted"},
		{"einval", errors.New("run: invalid argument"), "", "invalid argument"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var f fakeTB
			SkipIfNotSupported(&f, tt.err)
			if (tt.skip == "") != (f.skipped == "") || !strings.Contains(f.skipped, tt.skip) {
				t.Errorf("skipped %q, want %q", f.skipped, tt.skip)
			}
			if (tt.fail == "") != (f.failed == "") || !strings.Contains(f.failed, tt.fail) {
				t.Errorf("failed %q, want %q", f.failed, tt.fail)
			}
		})
	}
}
