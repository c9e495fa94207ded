package bpftest

import (
	"os"
	"testing"
)

// The probe answers on this kernel: supported, or missing by name.
func TestHaveXDPLiveFrames(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: loads a BPF program")
	}
	SkipIfNotSupported(t, HaveXDPLiveFrames())
}
