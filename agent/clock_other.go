//go:build !linux

package agent

import (
	"fmt"
	"runtime"
)

// readHostClock knows no clock discipline off Linux.
func readHostClock() clockInfo {
	return clockInfo{err: fmt.Errorf("the clock's discipline (adjtimex) is read on Linux only, not %s", runtime.GOOS)}
}
