//go:build linux

package pktgen

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// MonoOffset is CLOCK_REALTIME minus CLOCK_MONOTONIC in ns, now: the
// realtime clock read on both sides of the monotonic one, averaged.
func MonoOffset() (int64, error) {
	var r0, m, r1 unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_REALTIME, &r0); err != nil {
		return 0, fmt.Errorf("read CLOCK_REALTIME: %w", err)
	}
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &m); err != nil {
		return 0, fmt.Errorf("read CLOCK_MONOTONIC: %w", err)
	}
	if err := unix.ClockGettime(unix.CLOCK_REALTIME, &r1); err != nil {
		return 0, fmt.Errorf("read CLOCK_REALTIME: %w", err)
	}
	return r0.Nano() + (r1.Nano()-r0.Nano())/2 - m.Nano(), nil
}
