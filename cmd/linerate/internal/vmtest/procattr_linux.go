//go:build linux

package vmtest

import "syscall"

// qemuProcAttr makes the kernel kill qemu when the process that started
// it dies (a test binary killed by its -timeout or by a signal), so that
// no guest outlives its test.
func qemuProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
