package report

import (
	"fmt"
	"io"

	"github.com/linerate/linerate/coordinator"
	"github.com/linerate/linerate/latency"
)

// clockText is the clock delays are on, with its bound in whole µs when
// it has one: "same-host", "estimated ±420".
func clockText(l *latency.Latency) string {
	if l.ClockErrorUs > 0 {
		return fmt.Sprintf("%s ±%.0f", l.Clock, l.ClockErrorUs)
	}
	return string(l.Clock)
}

// stampLines says, under the latency table, which flows' delays were
// taken lower for their senders' early stamps, and by how much: kernel
// pktgen stamps a frame before its pacing wait (coordinator/stamp.go).
func stampLines(w io.Writer, flows []coordinator.Flow) {
	for _, fl := range flows {
		if l := fl.Latency; l != nil && l.StampCorrectionUs > 0 {
			fmt.Fprintf(w, "%s→%s: %.0f µs taken off every delay: kernel pktgen stamps a frame before its pacing wait, and waited that long a frame\n",
				fl.Sender, fl.Receiver, l.StampCorrectionUs)
		}
	}
}
