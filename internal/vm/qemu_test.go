package vm

import (
	"os/exec"
	"testing"
)

// Accel's answer is one a qemu here accepts.
func TestAccel(t *testing.T) {
	got := Accel()
	if got != AccelKVM && got != AccelTCG {
		t.Fatalf("Accel() = %q", got)
	}
	t.Logf("accel here: %s (KVM: ioctl %v, probe %v)", got, kvmUsable(), probeKVMIfQEMU())
	if got == AccelKVM && (kvmUsable() != nil || probeKVM() != nil) {
		t.Error("kvm chosen though it does not work")
	}
}

func probeKVMIfQEMU() error {
	if _, err := exec.LookPath(QEMU); err != nil {
		return err
	}
	return probeKVM()
}
