package report

import (
	"fmt"
	"io"

	"github.com/linerate/linerate/coordinator"
)

// irqVerifyTable writes, per host, where its queue IRQs fired over the
// run's traffic against their planned CPUs (irq_verify), or why the host
// has no such record. Nothing when no host has either (a document from
// before irq_verify).
func irqVerifyTable(w io.Writer, hosts []coordinator.Host) {
	shown := false
	for _, h := range hosts {
		shown = shown || h.IRQVerify != nil || h.IRQVerifyReason != ""
	}
	if !shown {
		return
	}
	fmt.Fprintln(w, "\nqueue IRQs over the traffic (planned: the run's tuning, else the IRQ's affinity):")
	for _, h := range hosts {
		v := h.IRQVerify
		if v == nil {
			if h.IRQVerifyReason != "" {
				fmt.Fprintf(w, "%s: %s\n", h.Name, h.IRQVerifyReason)
			}
			continue
		}
		fmt.Fprintf(w, "%s (%s, over %s): %d queue IRQs, %d fired off their planned CPUs\n", h.Name, v.Iface, v.Interval, len(v.IRQs), v.OffCPU)
		tw := newTab(w, 0)
		fmt.Fprintln(tw, "  IRQ\tQUEUE\tPLANNED\tFIRED ON (cpu:count)\tOFF-CPU")
		for _, q := range v.IRQs {
			off := "-"
			if q.OffCPU {
				off = "yes"
			}
			fmt.Fprintf(tw, "  %d\t%d\t%s (%s)\t%s\t%s\n", q.IRQ, q.Queue, q.Planned, q.Source, q.FiredOn(), off)
		}
		tw.Flush()
		for _, q := range v.IRQs {
			if q.Note != "" {
				fmt.Fprintf(w, "  irq %d: %s\n", q.IRQ, q.Note)
			}
		}
	}
}
