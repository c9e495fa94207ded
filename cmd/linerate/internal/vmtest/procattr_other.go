//go:build !linux

package vmtest

import "syscall"

// qemuProcAttr returns no attributes: guests run on Linux hosts only
// (SkipUnlessAvailable).
func qemuProcAttr() *syscall.SysProcAttr { return nil }
