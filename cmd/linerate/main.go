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
	ctx, stop := signal.NotifyContext(context.Background(), shutdownSignals(os.Args[1:])...)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// shutdownSignals are the signals that end the command through its
// context, so it cleans up: SIGINT, SIGTERM and, but for the agent, which
// reloads its certificates on it (hangupIsReload), SIGHUP (a closed
// terminal).
func shutdownSignals(args []string) []os.Signal {
	sigs := []os.Signal{os.Interrupt, syscall.SIGTERM}
	if !hangupIsReload(args) {
		sigs = append(sigs, syscall.SIGHUP)
	}
	return sigs
}

// hangupIsReload reports whether args run the agent, which handles SIGHUP
// itself (hangups) as a certificate reload.
func hangupIsReload(args []string) bool {
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "--log-level" || a == "--log-format":
			i++ // the flag's value
		case len(a) > 0 && a[0] == '-':
		default:
			return a == "agent"
		}
	}
	return false
}
