package vm

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/linerate/linerate/internal/safefile"
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

// AccelEnv names the environment variable that overrides the choice of
// accelerator: "kvm" or "tcg"; unset, AccelFor decides.
const AccelEnv = "LINERATE_VM_ACCEL"

// AccelFor is the accelerator guests of kernel k run with: $AccelEnv when
// set, else AccelKVM when KVM boots k here (checkKVM), else AccelTCG
// (emulation: slower, works anywhere). The boot is the only probe that
// tells: a host with nested virtualisation can open /dev/kvm, create a
// VM and start a paused vCPU, then stop the guest's kernel a second into
// its boot ("KVM internal error. Suberror: 1", an emulation failure).
// An override of kvm that does not work is an error naming what failed.
func AccelFor(k *Kernel) (string, error) {
	switch env := os.Getenv(AccelEnv); env {
	case AccelTCG:
		return AccelTCG, nil
	case AccelKVM:
		if err := checkKVM(k); err != nil {
			return "", fmt.Errorf("$%s=kvm: %w (unset it to fall back to TCG)", AccelEnv, err)
		}
		return AccelKVM, nil
	case "":
		if checkKVM(k) == nil {
			return AccelKVM, nil
		}
		return AccelTCG, nil
	default:
		return "", fmt.Errorf("$%s=%q: want %s, %s or unset (KVM when it boots the guest kernel, else TCG)", AccelEnv, env, AccelKVM, AccelTCG)
	}
}

// checkKVM is nil when /dev/kvm creates a VM, qemu starts a KVM vCPU on
// it and boots k's kernel to its end. The boot's verdict is kept beside
// the kernel for the host's boot (kvmVerdictFile), so only the first
// process after a host boots pays for it; the rest is decided once per
// process.
func checkKVM(k *Kernel) error {
	kvmMu.Lock()
	defer kvmMu.Unlock()
	key := ""
	if k != nil {
		key = k.Vmlinuz
	}
	if err, ok := kvmChecked[key]; ok {
		return err
	}
	err := kvmUsable()
	if err == nil {
		err = probeKVM()
	}
	if err == nil && k != nil {
		err = bootVerdict(k.Vmlinuz)
	}
	kvmChecked[key] = err
	return err
}

var (
	kvmMu      sync.Mutex
	kvmChecked = map[string]error{}
)

// bootVerdict is probeKVMBoot's answer for vmlinuz, read from the
// verdict file of this host boot when there is one, else probed and
// written there ("ok" or the error's text).
func bootVerdict(vmlinuz string) error {
	file := kvmVerdictFile(vmlinuz)
	if file != "" {
		if b, err := os.ReadFile(file); err == nil {
			if v := strings.TrimSpace(string(b)); v != "ok" {
				return fmt.Errorf("%s (probed at this host's boot: %s)", v, file)
			}
			return nil
		}
	}
	err := probeKVMBoot(vmlinuz)
	if file != "" {
		v := "ok"
		if err != nil {
			v = err.Error()
		}
		_ = safefile.WriteFile(file, []byte(v+"\n"), 0o644) // a cache: unwritable is only slower
	}
	return err
}

// kvmVerdictFile is where the verdict on KVM booting vmlinuz is kept for
// this host boot: beside the kernel, named by /proc's boot id ("" when
// there is none).
func kvmVerdictFile(vmlinuz string) string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	id := strings.TrimSpace(string(b))
	if err != nil || id == "" {
		return ""
	}
	return filepath.Join(filepath.Dir(vmlinuz), ".kvm-boots-"+filepath.Base(vmlinuz)+"-"+id)
}

// kvmBootBound bounds probeKVMBoot: a kernel under KVM boots to its panic
// in one or two seconds (TCG takes 9 s here).
const kvmBootBound = 10 * time.Second

// probeKVMBoot boots vmlinuz under KVM with no root file system and
// panic=-1: the kernel runs its whole boot, panics for want of a root,
// reboots, and qemu (-no-reboot) exits 0. A KVM that cannot run the
// kernel stops it (qemu lives on, paused) and says so in its output.
func probeKVMBoot(vmlinuz string) error {
	ctx, cancel := context.WithTimeout(context.Background(), kvmBootBound)
	defer cancel()
	cmd := exec.CommandContext(ctx, QEMU, "-accel", AccelKVM, "-cpu", "host", "-m", "256", "-smp", "1",
		"-nodefaults", "-no-user-config", "-display", "none", "-no-reboot", "-serial", "stdio",
		"-kernel", vmlinuz, "-append", "console=ttyS0 panic=-1 loglevel=4 root=/dev/nonexistent")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if msg := stoppedLine(out.String()); msg != "" {
		return fmt.Errorf("qemu -accel kvm cannot boot %s here: %s", vmlinuz, msg)
	}
	if ctx.Err() != nil {
		return fmt.Errorf("qemu -accel kvm did not boot %s to its end within %s", vmlinuz, kvmBootBound)
	}
	if err != nil {
		return fmt.Errorf("qemu -accel kvm booting %s: %w: %s", vmlinuz, err, tailString(out.String(), 400))
	}
	return nil
}

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
