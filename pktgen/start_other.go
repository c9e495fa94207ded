//go:build !linux

package pktgen

import (
	"fmt"
	"runtime"
	"time"
)

func startIsolated(string, time.Time) error {
	return fmt.Errorf("pktgen start: %w on %s", ErrNoPktgen, runtime.GOOS)
}
