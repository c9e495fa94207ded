package report

import (
	"fmt"
	"io"

	"github.com/linerate/linerate/coordinator"
)

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
	fmt.Fprintf(w, "duplicates with --burst %d: %d copies beyond a frame's %d: a burst pktgen ended early (its device's queue stopped) moves the next frame's sequence into that frame's step, or the path duplicated them; counted as received (copies the path duplicated would hide as many lost)\n",
		res.Burst, dups, res.Copies)
}
