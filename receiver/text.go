package receiver

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
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
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SRC\tDST\tPORT\tRECEIVED\tMAX_SEQ\tMISSING\tDUPLICATES\tREORDERED\tLATE\tMISSING_RANGES")
	for _, s := range r.Streams {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%s\n", s.Src, s.Dst, s.DstPort, s.Received, s.MaxSeq, s.Missing, s.Duplicates, s.Reordered, s.Late, s.RangesText())
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
		if s.Unrecorded > 0 {
			fmt.Fprintf(w, "note: %s -> %s:%d: %d packets could not be recorded in the window (CPUs contending): missing may count them\n", s.Src, s.Dst, s.DstPort, s.Unrecorded)
		}
	}
	l := r.Link
	fmt.Fprintf(w, "link     rx_packets %d  rx_dropped %d  rx_missed %d  rx_fifo %d  xdp_packets %d  xdp_drops %d\n",
		l.RxPackets, l.RxDropped, l.RxMissed, l.RxFifo, l.XDPPackets, l.XDPDrops)
	if r.Method == MethodAFPacket {
		_, err := fmt.Fprintf(w, "ring     drops %d\n", r.RingDrops)
		return err
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
