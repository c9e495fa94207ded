//go:build linux

package vm

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// kvmCreateVM is KVM_CREATE_VM, _IO(KVMIO=0xAE, 0x01).
const kvmCreateVM = 0xAE01

// kvmUsable opens /dev/kvm and creates (and closes) a VM on it: a device
// node that exists without a working KVM (no permission, nested
// virtualisation off) fails here, as qemu -accel kvm would.
func kvmUsable() error {
	fd, err := unix.Open("/dev/kvm", unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open /dev/kvm: %w", err)
	}
	defer unix.Close(fd)
	vmfd, err := unix.IoctlRetInt(fd, kvmCreateVM)
	if err != nil {
		return fmt.Errorf("KVM_CREATE_VM on /dev/kvm: %w", err)
	}
	return unix.Close(vmfd)
}
