//go:build !linux

package results

import (
	"errors"
	"syscall"
	"time"
)

func (p LocalProcesses) bootID() string { return "" }

// started cannot be read without /proc.
func (p LocalProcesses) started(int) (time.Time, bool) { return time.Time{}, false }

// exists asks the kernel with kill(pid, 0): EPERM is a process of
// another user.
func (p LocalProcesses) exists(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
