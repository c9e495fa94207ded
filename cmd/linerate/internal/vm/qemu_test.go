package vm

import (
	"os"
	"path/filepath"
	"testing"
)

// A qemu that paused its guest on a KVM internal error lives on:
// qemuStopped reads why from its log, so Start fails at once, naming it.
func TestQEMUStopped(t *testing.T) {
	dir := t.TempDir()
	if got := qemuStopped(dir); got != "" {
		t.Errorf("no qemu.log: %q, want \"\"", got)
	}
	log := "qemu-system-x86_64: -accel kvm: warning: Number of SMP cpus requested (4) exceeds the recommended cpus supported by KVM (2)\nKVM internal error. Suberror: 1\nextra data[0]: 0x1\n"
	if err := os.WriteFile(filepath.Join(dir, QEMULog), []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := qemuStopped(dir); got != "KVM internal error. Suberror: 1" {
		t.Errorf("qemuStopped = %q", got)
	}
	if got := tailOf(filepath.Join(dir, QEMULog), 13); got != "data[0]: 0x1" {
		t.Errorf("tailOf = %q", got)
	}
	if err := os.WriteFile(filepath.Join(dir, QEMULog), []byte("qemu-system-x86_64: warning: host doesn't support requested feature\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := qemuStopped(dir); got != "" {
		t.Errorf("a warning only: %q, want \"\"", got)
	}
}
