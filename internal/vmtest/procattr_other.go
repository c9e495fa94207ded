//go:build !linux

package vmtest

import "syscall"

// qemuProcAttr: guests run on Linux hosts only (SkipUnlessAvailable).
func qemuProcAttr() *syscall.SysProcAttr { return nil }
