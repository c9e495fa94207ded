package report

import (
	"fmt"
	"io"

	"github.com/linerate/linerate/coordinator"
)

// engineNotes writes what each host's engines chose for the run and why:
// the sender backend's notes (afxdp: copy or zero-copy, need_wakeup on or
// off) and the receiver method's reason, one line each, so that a run's
// report says what a `send` or `recv` would have printed.
func engineNotes(w io.Writer, hosts []coordinator.Host) {
	for _, h := range hosts {
		if h.Role != "receiver" {
			for _, n := range h.BackendNotes {
				fmt.Fprintf(w, "sender %s: %s: %s\n", h.Name, h.Backend, n)
			}
		}
		if h.Role != "sender" && h.MethodReason != "" {
			fmt.Fprintf(w, "receiver %s: %s: %s\n", h.Name, h.Method, h.MethodReason)
		}
	}
}
