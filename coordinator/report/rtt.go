package report

import (
	"fmt"
	"io"

	"github.com/linerate/linerate/coordinator"
)

// rttTable writes each flow's round trips (--latency rtt): its latency
// stream's books both ways, the round trips of what came back and the
// lowest round trip per second, their median and least (nothing when no
// flow has round trips).
func rttTable(w io.Writer, flows []coordinator.Flow) {
	header := "RTT (µs)\tSENT\tRECEIVED\tREFLECTED\tRETURNED\tLOST OUT\tLOST BACK\tMIN\tP50\tP99\tMAX\tLOWEST/S MEDIAN\tLOWEST/S MIN\tCLOCK\t"
	flowSection(w, flows, header, func(fl *coordinator.Flow) bool { return fl.RTT != nil }, func(tw io.Writer, fl *coordinator.Flow) {
		r := fl.RTT
		fmt.Fprintf(tw, "%s→%s\t%d\t%d\t%d\t%d\t%d\t%d\t", fl.Sender, fl.Receiver, r.Sent, r.Received, r.Reflected, r.Returned, r.LostOut, r.LostBack)
		clock := "-"
		if l := r.Latency; l != nil && l.Samples() > 0 {
			m := l.Summary()
			fmt.Fprintf(tw, "%g\t%g\t%g\t%g\t", m.MinUs, m.P50Us, m.P99Us, m.MaxUs)
			clock = clockText(l)
		} else {
			fmt.Fprint(tw, "-\t-\t-\t-\t")
		}
		if lo := r.Lowest; lo != nil {
			fmt.Fprintf(tw, "%d\t%d\t", lo.MedianUs, lo.MinUs)
		} else {
			fmt.Fprint(tw, "-\t-\t")
		}
		fmt.Fprintf(tw, "%s\t\n", clock)
	})
}
