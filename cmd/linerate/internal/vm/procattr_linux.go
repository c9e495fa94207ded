//go:build linux

package vm

import "syscall"

// setOwnGroup puts qemu in a process group of its own, without a
// parent-death signal: a guest outlives the process that started it.
func setOwnGroup(a *syscall.SysProcAttr) {
	a.Setpgid, a.Pgid = true, 0
	a.Pdeathsig = 0
}
