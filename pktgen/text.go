package pktgen

import (
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"
)

// WriteDeviceTable renders parsed device files for people (`linerate
// pktgen parse`): a row per device with its result.
func WriteDeviceTable(w io.Writer, files []*DeviceFile) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "DEVICE\tSTATE\tPACKETS\tERRORS\tUSEC\tPPS\tMB/S\tSIZE\t")
	for _, df := range files {
		r := df.Result
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t\n", df.Device, r.State, r.Packets, r.Errors, r.USec, r.PPS, r.Mbps, r.PktSize)
	}
	return tw.Flush()
}

// WriteTable renders the summary for people (`linerate send`): the
// totals, a row per stream, then the notes and the warnings.
func (s *Summary) WriteTable(w io.Writer) error {
	fmt.Fprintf(w, "%s backend, %s, %d threads: sent %d packets, %d errors in %.3f s\n", s.Backend, s.Device, len(s.Threads), s.Packets, s.Errors, s.Seconds())
	fmt.Fprintf(w, "%.0f pps, L2 %.3f Mb/s, L1 %.3f Mb/s (frames of %.0f bytes + FCS)\n", s.PPS, s.L2BPS/1e6, s.L1BPS/1e6, s.FrameBytes)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CPU\tQUEUE\tENTRY\tSRC\tPACKETS\tERRORS\tUSEC\tPPS\t")
	for _, t := range s.Threads {
		queue := "-"
		if t.Queue != nil {
			queue = strconv.Itoa(*t.Queue)
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%d\t%d\t%d\t%.0f\t\n", t.CPU, queue, t.Entry, t.Src, t.Packets, t.Errors, t.USec, t.PPS)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, note := range s.Notes {
		fmt.Fprintf(w, "note: %s\n", note)
	}
	for _, warn := range s.Warnings {
		fmt.Fprintf(w, "warning: %s\n", warn)
	}
	if s.Interrupted {
		fmt.Fprintln(w, "interrupted: pktgen was stopped early")
	}
	return nil
}
