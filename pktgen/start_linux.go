//go:build linux

package pktgen

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

// startIsolated writes "start" from a thread of its own with every signal
// blocked, at the instant at: the thread waits for it (WaitUntil) once
// its mask is set and the file is open, so the write is the next thing it
// does. pktgen's start waits with msleep_interruptible and treats any
// pending signal as "stop all threads"; with the mask in place signals
// meant for the process (SIGINT, SIGCHLD, the runtime's SIGURG) go to
// other threads, and a deliberate stop is a "stop" write from another fd.
// The thread stays locked, so the runtime discards it afterwards rather
// than reusing a thread with a changed signal mask.
func startIsolated(pgctrl string, at time.Time) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread exits with the goroutine
		var all unix.Sigset_t
		for i := range all.Val {
			all.Val[i] = ^all.Val[i] // all ones, whatever the word size
		}
		if err := unix.PthreadSigmask(unix.SIG_BLOCK, &all, nil); err != nil {
			errc <- fmt.Errorf("block signals on the pktgen start thread: %w", err)
			return
		}
		f, err := os.OpenFile(pgctrl, os.O_WRONLY, 0)
		if err != nil {
			errc <- err
			return
		}
		if err := WaitUntil(context.Background(), at); err != nil {
			f.Close()
			errc <- err
			return
		}
		errc <- writeTo(f, pgctrl, "start")
	}()
	return <-errc
}
