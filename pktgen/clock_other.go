//go:build !linux

package pktgen

import (
	"fmt"
	"runtime"
)

// MonoOffset is CLOCK_REALTIME minus CLOCK_MONOTONIC in ns: Linux only.
func MonoOffset() (int64, error) {
	return 0, fmt.Errorf("read the monotonic clock's offset: %w on %s", ErrNoPktgen, runtime.GOOS)
}
