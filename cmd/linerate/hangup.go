package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/hashicorp/go-hclog"
)

// hangups delivers SIGHUP to the agent command instead of the default
// action (terminate) or main's shutdown context (hangupIsReload keeps
// SIGHUP out of it for the agent).
func hangups() (<-chan os.Signal, func()) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGHUP)
	return ch, func() { signal.Stop(ch) }
}

// reloadOnHangup calls reload at every hangup until ctx ends. A failed
// reload is reported by reload itself (the agent logs it and keeps its
// previous certificate); the agent keeps serving either way.
func reloadOnHangup(ctx context.Context, log hclog.Logger, hangup <-chan os.Signal, reload func() error) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-hangup:
			log.Info("SIGHUP: reloading certificates")
			_ = reload()
		}
	}
}
