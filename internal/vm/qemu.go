package vm

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"time"
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

// Accel is AccelKVM when KVM works here, else AccelTCG (emulation:
// slower, works anywhere). KVM works when /dev/kvm opens, the kernel
// creates a VM on it (KVM_CREATE_VM), and qemu can set up a vCPU with
// -accel kvm -cpu host: some hosts (nested virtualisation without the
// CPU features passed through) pass the first two and abort qemu at the
// vCPU's MSRs. Decided once per process.
func Accel() string {
	accelOnce.Do(func() {
		accel = AccelTCG
		if kvmUsable() == nil && probeKVM() == nil {
			accel = AccelKVM
		}
	})
	return accel
}

var (
	accelOnce sync.Once
	accel     string
)

// probeKVM starts qemu with KVM and one vCPU, paused, and quits it from
// the monitor: qemu exits 0 when KVM can run a guest.
func probeKVM() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, QEMU, "-accel", AccelKVM, "-cpu", "host", "-m", "64",
		"-nodefaults", "-no-user-config", "-display", "none", "-S", "-monitor", "stdio")
	cmd.Stdin = strings.NewReader("quit\n")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("probe KVM with %s: %w: %s", QEMU, err, strings.TrimSpace(out.String()))
	}
	return nil
}
