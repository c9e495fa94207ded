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
	// The share of the wall clock each wait spends on a CPU: a spin's is
	// most of it on a quiet machine, and less when other work shares the
	// CPUs (the thread is preempted while it spins), so the spin is judged
	// against the sleep measured beside it, not against the wall clock.
	share := map[bool]float64{}
	for _, sleepOnly := range []bool{false, true} {
		c := &Control{sleepOnly: sleepOnly, stop: new(atomic.Bool), stopCh: make(chan struct{}), base: time.Now()}
		c0, w0 := cpu(), time.Now()
		for range 200 {
			c.Wait(90 * time.Microsecond)
		}
		used, wall := cpu()-c0, time.Since(w0)
		t.Logf("sleep only %t: %v of CPU over %v", sleepOnly, used, wall)
		if wall < 200*90*time.Microsecond {
			t.Errorf("sleep only %t: waited %v, less than the %v asked", sleepOnly, wall, 200*90*time.Microsecond)
		}
		share[sleepOnly] = float64(used) / float64(wall)
	}
	if share[true] > 0.25 || share[false] < 4*share[true] {
		t.Errorf("CPU per second waited: spinning %.2f, sleeping only %.2f: want the sleep at most 0.25 and the spin at least 4 times it", share[false], share[true])
	}
}
