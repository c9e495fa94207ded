package pktgen

import (
	"fmt"
	"io"
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
