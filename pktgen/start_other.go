//go:build !linux

package pktgen

import (
	"fmt"
	"runtime"
)

func startIsolated(string) error {
	return fmt.Errorf("pktgen start: %w on %s", ErrNoPktgen, runtime.GOOS)
}
