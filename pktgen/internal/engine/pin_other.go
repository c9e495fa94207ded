//go:build !linux

package engine

import (
	"fmt"
	"runtime"

	"github.com/linerate/linerate/pktgen"
)

func lockThread() { runtime.LockOSThread() }

func pinToCPU(cpu int) error {
	return fmt.Errorf("pin to cpu %d on %s: %w", cpu, runtime.GOOS, pktgen.ErrUnsupported)
}
