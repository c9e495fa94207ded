package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	// A closed output pipe (`linerate … | head`) must not kill the
	// process before it restores what it changed: writes fail instead.
	signal.Ignore(syscall.SIGPIPE)
	// SIGINT, SIGTERM and SIGHUP stop every command the same way (SIGHUP
	// unless the command claims it: hangup.go).
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	ctx, stopHangup := withHangup(ctx)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stopHangup()
	stop()
	os.Exit(code)
}
