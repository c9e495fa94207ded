//go:build !linux

package live

import (
	"fmt"
	"runtime"

	"github.com/linerate/linerate/doctor"
)

// ReadClock knows no clock discipline off Linux.
func ReadClock() (doctor.Clock, error) {
	return doctor.Clock{}, fmt.Errorf("the clock's discipline (adjtimex) is read on Linux only, not %s", runtime.GOOS)
}
