package vm

import (
	"bytes"
	"context"
	"fmt"
	"os"
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

// AccelEnv names the environment variable that picks the accelerator:
// "kvm" opts in to KVM, "tcg" or empty is emulation.
const AccelEnv = "LINERATE_VM_ACCEL"

// Accel is the accelerator guests run with when Machine.Accel is empty:
// AccelKVM only when $LINERATE_VM_ACCEL is "kvm", else AccelTCG
// (emulation: slower, works anywhere). KVM is opt-in because no probe
// short of booting the guest tells: some hosts with nested
// virtualisation open /dev/kvm, create a VM and start a paused vCPU, then
// stop the guest's kernel a second into its boot ("KVM internal error.
// Suberror: 1", an emulation failure). Start checks an opted-in KVM
// (checkKVM) and fails naming what did not work.
func Accel() string {
	if os.Getenv(AccelEnv) == AccelKVM {
		return AccelKVM
	}
	return AccelTCG
}

// accelFor is the accelerator of a machine asking for want ("" =
// Accel()), checked: an unknown name, or $LINERATE_VM_ACCEL naming one,
// is an error; KVM must pass checkKVM.
func accelFor(want string) (string, error) {
	if want == "" {
		switch env := os.Getenv(AccelEnv); env {
		case "", AccelKVM, AccelTCG:
			want = Accel()
		default:
			return "", fmt.Errorf("$%s=%q: want %s, %s or unset (%s)", AccelEnv, env, AccelKVM, AccelTCG, AccelTCG)
		}
	}
	switch want {
	case AccelTCG:
		return want, nil
	case AccelKVM:
		if err := checkKVM(); err != nil {
			return "", fmt.Errorf("-accel kvm: %w (unset $%s for TCG)", err, AccelEnv)
		}
		return want, nil
	}
	return "", fmt.Errorf("accelerator %q: want %s or %s", want, AccelKVM, AccelTCG)
}

// checkKVM is nil when /dev/kvm creates a VM and qemu starts a KVM vCPU
// on it; decided once per process.
func checkKVM() error {
	kvmOnce.Do(func() {
		if kvmErr = kvmUsable(); kvmErr == nil {
			kvmErr = probeKVM()
		}
	})
	return kvmErr
}

var (
	kvmOnce sync.Once
	kvmErr  error
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
