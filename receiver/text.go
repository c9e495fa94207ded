package receiver

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/linerate/linerate/latency"
)

// WriteTable renders the report for people (`linerate recv`): the
// method, the packets, a row per stream, and the interface's counters.
func (r *Report) WriteTable(w io.Writer) error {
	fmt.Fprintf(w, "method   %s (%s)\n", r.Method, r.MethodReason)
	fmt.Fprintf(w, "packets  %d: %d test, %d other", r.Packets, r.TestPackets(), r.OtherPackets)
	if r.OverflowPackets > 0 {
		fmt.Fprintf(w, " (%d test packets of streams beyond --max-streams)", r.OverflowPackets)
	}
	fmt.Fprintln(w)
	timed := r.latency()
	if timed != nil {
		fmt.Fprintf(w, "latency  one-way, µs, on the %s clock", timed.Clock)
		if timed.ClockErrorUs > 0 {
			fmt.Fprintf(w, " (±%g µs)", timed.ClockErrorUs)
		}
		fmt.Fprintln(w)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	head := "SRC\tDST\tPORT\tRECEIVED\tMAX_SEQ\tMISSING\tDUPLICATES\tREORDERED\tLATE\tMISSING_RANGES"
	if timed != nil {
		head += "\tMIN\tP50\tP99\tMAX\tJITTER"
	}
	fmt.Fprintln(tw, head)
	for _, s := range r.Streams {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%s", s.Src, s.Dst, s.DstPort, s.Received, s.MaxSeq, s.Missing, s.Duplicates, s.Reordered, s.Late, s.RangesText())
		if s.Latency != nil {
			m := s.Latency.Summary()
			fmt.Fprintf(tw, "\t%g\t%g\t%g\t%g\t%.1f", m.MinUs, m.P50Us, m.P99Us, m.MaxUs, m.JitterUs)
		}
		fmt.Fprintln(tw)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, s := range r.Streams {
		if s.BeyondCapacity > 0 {
			fmt.Fprintf(w, "note: %s -> %s:%d: %d packets had sequence 0 (pktgen numbers from 1): received, not tracked\n", s.Src, s.Dst, s.DstPort, s.BeyondCapacity)
		}
		if s.Late > 0 {
			fmt.Fprintf(w, "note: %s -> %s:%d: %d packets arrived after their sequence left the window of %d: each a duplicate or a sequence counted missing, the window cannot tell which\n", s.Src, s.Dst, s.DstPort, s.Late, r.Window)
		}
		if l := s.Latency; l != nil && (l.Negative > 0 || l.Absurd > 0) {
			var what []string
			if l.Negative > 0 {
				what = append(what, fmt.Sprintf("%d packets arrived before their send time", l.Negative))
			}
			if l.Absurd > 0 {
				what = append(what, fmt.Sprintf("%d packets arrived %g s or more after it (or carried none)", l.Absurd, float64(latency.AbsurdUs)/1e6))
			}
			fmt.Fprintf(w, "warning: %s -> %s:%d: %s: the sender's clock and this host's disagree (--clock %s); the delays above leave them out\n",
				s.Src, s.Dst, s.DstPort, strings.Join(what, ", "), l.Clock)
		}
		if s.Unrecorded > 0 {
			fmt.Fprintf(w, "note: %s -> %s:%d: %d packets could not be recorded in the window (CPUs contending): missing may count them\n", s.Src, s.Dst, s.DstPort, s.Unrecorded)
		}
	}
	l := r.Link
	fmt.Fprintf(w, "link     rx_packets %d  rx_dropped %d  rx_missed %d  rx_fifo %d  xdp_packets %d  xdp_drops %d\n",
		l.RxPackets, l.RxDropped, l.RxMissed, l.RxFifo, l.XDPPackets, l.XDPDrops)
	if r.Method == MethodAFPacket || r.Method == MethodAFXDP {
		fmt.Fprintf(w, "ring     drops %d\n", r.RingDrops)
	}
	_, err := fmt.Fprintf(w, "rss      %s\n", SpreadText(r.Method, r.Streams))
	return err
}

// latency is the first stream's delays, which say the clock every
// stream's are on (nil: latency off, or no stream).
func (r *Report) latency() *latency.Latency {
	for _, s := range r.Streams {
		if s.Latency != nil {
			return s.Latency
		}
	}
	return nil
}

// RangesText prints the stream's missing ranges as 4-9,12; "..." when
// there are more than the report lists (or below the ones it lists), "-"
// when none.
func (s StreamReport) RangesText() string {
	if len(s.MissingRanges) == 0 {
		if s.Missing > 0 {
			return "..."
		}
		return "-"
	}
	var parts []string
	var listed uint64
	for _, r := range s.MissingRanges {
		listed += r[1] - r[0] + 1
		if r[0] == r[1] {
			parts = append(parts, fmt.Sprint(r[0]))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", r[0], r[1]))
		}
	}
	out := strings.Join(parts, ",")
	if s.MissingRangesFrom > 0 {
		out = "...," + out
	}
	if listed < s.Missing && s.MissingRangesFrom == 0 {
		out += ",..."
	}
	return out
}
