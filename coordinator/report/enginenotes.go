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

// burstNote says, in a run with kernel pktgen's bursts whose receivers
// counted duplicates, what they are and that the books counted them.
func burstNote(w io.Writer, res *coordinator.Result) {
	if res.Burst <= 1 {
		return
	}
	var dups uint64
	for _, f := range res.Flows {
		dups += f.Duplicates
	}
	if dups == 0 {
		return
	}
	fmt.Fprintf(w, "duplicates with --burst %d: %d copies beyond a frame's %d: a burst pktgen ended early (its device's queue stopped) moves the next frame's sequence into that frame's step, or the path duplicated them; counted as received\n",
		res.Burst, dups, res.Copies)
}
