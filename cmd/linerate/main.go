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
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
