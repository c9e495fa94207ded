//go:build linux

package engine

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestWaitSleepOnly: a gap under spinBelow is spun through (the thread's
// CPU time is about the time waited), unless the send paces by sleeping
// only (pktgen.Config.SleepPacing), which takes next to no CPU.
func TestWaitSleepOnly(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cpu := func() time.Duration {
		var ru unix.Rusage
		if err := unix.Getrusage(unix.RUSAGE_THREAD, &ru); err != nil {
			t.Fatal(err)
		}
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	for _, sleepOnly := range []bool{false, true} {
		c := &Control{sleepOnly: sleepOnly, stop: new(atomic.Bool), stopCh: make(chan struct{}), base: time.Now()}
		c0, w0 := cpu(), time.Now()
		for range 200 {
			c.Wait(90 * time.Microsecond)
		}
		used, wall := cpu()-c0, time.Since(w0)
		t.Logf("sleep only %t: %v of CPU over %v", sleepOnly, used, wall)
		if wall < 200*90*time.Microsecond || (!sleepOnly && used < wall/2) || (sleepOnly && used > wall/4) {
			t.Errorf("sleep only %t: %v of CPU over %v waited (at least %v)", sleepOnly, used, wall, 200*90*time.Microsecond)
		}
	}
}
