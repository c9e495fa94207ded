//go:build linux

package engine

import (
	"runtime"

	"golang.org/x/sys/unix"
)

func lockThread() { runtime.LockOSThread() }

// pinToCPU binds the calling OS thread to cpu.
func pinToCPU(cpu int) error {
	var set unix.CPUSet
	set.Set(cpu)
	return unix.SchedSetaffinity(0, &set)
}
