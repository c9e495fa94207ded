//go:build linux

package pktgen

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// MonoOffset is CLOCK_REALTIME minus CLOCK_MONOTONIC in ns, now, read as
// bestOffset reads it from the host's clocks.
func MonoOffset() (int64, error) {
	return bestOffset(func() (r0, m, r1 int64, err error) {
		var a, b, c unix.Timespec
		if err := unix.ClockGettime(unix.CLOCK_REALTIME, &a); err != nil {
			return 0, 0, 0, fmt.Errorf("read CLOCK_REALTIME: %w", err)
		}
		if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &b); err != nil {
			return 0, 0, 0, fmt.Errorf("read CLOCK_MONOTONIC: %w", err)
		}
		if err := unix.ClockGettime(unix.CLOCK_REALTIME, &c); err != nil {
			return 0, 0, 0, fmt.Errorf("read CLOCK_REALTIME: %w", err)
		}
		return a.Nano(), b.Nano(), c.Nano(), nil
	})
}
