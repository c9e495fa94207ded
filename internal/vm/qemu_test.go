package vm

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// KVM is opt-in: without $LINERATE_VM_ACCEL guests are TCG, whatever
// /dev/kvm says; an unknown value is refused naming the variable.
func TestAccel(t *testing.T) {
	t.Setenv(AccelEnv, "")
	if got := Accel(); got != AccelTCG {
		t.Errorf("Accel() with %s unset = %q, want %s", AccelEnv, got, AccelTCG)
	}
	if got, err := accelFor(""); got != AccelTCG || err != nil {
		t.Errorf("accelFor(\"\") = %q, %v; want %s", got, err, AccelTCG)
	}
	t.Setenv(AccelEnv, AccelKVM)
	if got := Accel(); got != AccelKVM {
		t.Errorf("Accel() with %s=kvm = %q", AccelEnv, got)
	}
	// Opted in: accelFor answers kvm only when KVM passes its checks here.
	got, err := accelFor("")
	t.Logf("KVM here: %v", checkKVM())
	if (err == nil) != (checkKVM() == nil) || (err == nil && got != AccelKVM) {
		t.Errorf("accelFor with %s=kvm = %q, %v; checkKVM: %v", AccelEnv, got, err, checkKVM())
	}
	t.Setenv(AccelEnv, "hvf")
	if _, err := accelFor(""); err == nil || !strings.Contains(err.Error(), AccelEnv) || !strings.Contains(err.Error(), `"hvf"`) {
		t.Errorf("accelFor with %s=hvf: %v, want an error naming the variable and its value", AccelEnv, err)
	}
	if _, err := accelFor("xen"); err == nil || !strings.Contains(err.Error(), `"xen"`) {
		t.Errorf("accelFor(xen): %v", err)
	}
}

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
