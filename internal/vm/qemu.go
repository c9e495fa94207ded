package vm

import (
	"fmt"
	"os/exec"
)

// QEMU is the emulator binary guests run in (looked up in PATH).
const QEMU = "qemu-system-x86_64"

// Accelerators Accel returns.
const (
	AccelKVM = "kvm"
	AccelTCG = "tcg"
)

// Available returns nil when guests can be started here, else an error
// saying what to install.
func Available() error {
	if _, err := exec.LookPath(QEMU); err != nil {
		return fmt.Errorf("%s not found: apt-get install qemu-system-x86: %w", QEMU, err)
	}
	return nil
}

// Accel is AccelKVM when /dev/kvm opens and the kernel creates a VM on it
// (KVM_CREATE_VM), else AccelTCG (emulation: slower, works anywhere).
func Accel() string {
	if kvmUsable() == nil {
		return AccelKVM
	}
	return AccelTCG
}
