package main

import (
	"context"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"github.com/hashicorp/go-hclog"
)

// SIGHUP (a closed terminal window, a dropped ssh session) ends every
// command as SIGINT does — it cleans up and exits non-zero — unless the
// running command takes SIGHUP over with hangups (the agent: SIGHUP
// reloads its certificates).

type hangupKey struct{}

// hangup routes SIGHUP: to the command that claimed it, else to cancel.
type hangup struct {
	mu      sync.Mutex
	claimed chan os.Signal
}

// withHangup returns ctx, cancelled on the first SIGHUP unless the
// command claimed SIGHUP first (hangups); stop releases the signal.
func withHangup(parent context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancel(parent)
	h := &hangup{}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGHUP)
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case s := <-sig:
				h.mu.Lock()
				c := h.claimed
				h.mu.Unlock()
				if c == nil {
					cancel()
					return
				}
				select {
				case c <- s:
				default: // one pending SIGHUP is enough
				}
			}
		}
	}()
	return context.WithValue(ctx, hangupKey{}, h), func() { signal.Stop(sig); cancel() }
}

// hangups claims SIGHUP for the running command: from now on SIGHUP no
// longer cancels ctx but arrives on the returned channel. Nil (never
// ready) when ctx does not come from withHangup (run called in a test).
func hangups(ctx context.Context) <-chan os.Signal {
	h, ok := ctx.Value(hangupKey{}).(*hangup)
	if !ok {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.claimed == nil {
		h.claimed = make(chan os.Signal, 1)
	}
	return h.claimed
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
