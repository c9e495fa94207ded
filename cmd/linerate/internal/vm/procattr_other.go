//go:build !linux

package vm

import "syscall"

// setOwnGroup puts qemu in a process group of its own.
func setOwnGroup(a *syscall.SysProcAttr) { a.Setpgid, a.Pgid = true, 0 }
