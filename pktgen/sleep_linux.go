//go:build linux

package pktgen

import (
	"time"

	"golang.org/x/sys/unix"
)

// sleepFor sleeps about d in the kernel (clock_nanosleep), on the calling
// thread: a sending thread locked to its OS thread is woken by its own
// timer, not by the Go scheduler's (which wakes it through another
// thread, late on a busy host). A signal ends it early; WaitUntil loops.
func sleepFor(d time.Duration) {
	ts := unix.NsecToTimespec(int64(d))
	_ = unix.ClockNanosleep(unix.CLOCK_MONOTONIC, 0, &ts, nil)
}
