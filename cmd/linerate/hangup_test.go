//go:build unix

package main

import (
	"context"
	"os"
	"syscall"
	"testing"
	"time"
)

// SIGHUP cancels the command's context, as SIGINT does, unless the
// command claimed it: then it arrives on the claimed channel and the
// context lives on. The signal is real (sent to this process).
func TestHangup(t *testing.T) {
	ctx, stop := withHangup(context.Background())
	defer stop()
	hup := hangups(ctx)
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	select {
	case <-hup:
	case <-time.After(5 * time.Second):
		t.Fatal("a claimed SIGHUP never arrived")
	}
	if ctx.Err() != nil {
		t.Fatal("a claimed SIGHUP cancelled the context")
	}

	ctx2, stop2 := withHangup(context.Background())
	defer stop2()
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ctx2.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("SIGHUP did not cancel the context of a command that did not claim it")
	}
	if hangups(context.Background()) != nil {
		t.Error("hangups outside withHangup: want nil (never ready)")
	}
}
