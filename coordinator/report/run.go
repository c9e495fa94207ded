package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/linerate/linerate/coordinator"
	"github.com/linerate/linerate/coordinator/results"
)

// RunTable writes the terminal report of one run (`linerate run`): its
// status, a row per flow with its books and rates, a row per host, each
// hosts' notes (facts that ask nothing: queues wrapped onto fewer CPUs),
// each receiver's RSS spread (its queues' streams and packets), the hosts'
// checks (PREFLIGHT: every WARN, FAIL and KNOWN), where each host's queue
// IRQs fired, and the warnings: only what a person should act on (a WARN
// or FAIL, IRQs fired off their planned CPUs, …).
func RunTable(out io.Writer, res *coordinator.Result) error {
	w := &errWriter{w: out}
	fmt.Fprintf(w, "run %s: %s", res.RunID, res.Status)
	if res.Error != "" {
		fmt.Fprintf(w, " — %s", res.Error)
	}
	fmt.Fprintf(w, "\nframe %d B, pattern %s, agents' start skew %.0f µs\n", res.FrameSize, res.Pattern, res.StartSkewUS)
	if sp := res.StartSpread; sp != nil {
		spreadLine(w, "first frames", sp.FirstFrame)
		spreadLine(w, "first arrivals", sp.FirstArrival)
	}
	fmt.Fprintln(w)
	tw := newTab(w, tabwriter.AlignRight)
	fmt.Fprintln(tw, "FLOW\tSENT\tRECEIVED\tLOST\tLOSS\tDUPS\tREORD\tLOST@SENDER\tLOST@NET\tLOST@RECEIVER\tRATE\tL1\t%LINE\t")
	for _, fl := range res.Flows {
		name := fl.Sender + "→" + fl.Receiver
		if fl.Direction != "" {
			name += " " + string(fl.Direction)
		}
		if fl.GeneratorLimited {
			name += " (generator-limited)"
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%.4g%%\t%d\t%d\t%d\t%d\t%d\t%s\t%s\t%.2f\t\n", name, fl.Sent, fl.Received, fl.Lost,
			100*fl.LossRatio, fl.Duplicates, fl.Reordered, fl.LostSenderHost, fl.LostNetwork, fl.LostReceiverHost,
			results.FormatSI(fl.PPS, "pps"), results.FormatSI(fl.L1BPS, "b/s"), fl.LineRatePct)
	}
	tw.Flush()
	directionTable(w, res.Directions)
	if res.Latency == coordinator.LatencyOff {
		fmt.Fprintln(w, "\nlatency: off (--latency off): nothing timed")
	}
	latencyTable(w, res.Flows)
	rttTable(w, res.Flows)
	fmt.Fprintln(w)
	tw = newTab(w, 0)
	fmt.Fprintln(tw, "HOST\tROLE\tKERNEL\tIFACE\tDRIVER\tNUMA\tIRQS\tTUNING\tENGINE")
	for _, h := range res.Hosts {
		var pins []string
		for _, p := range h.IRQMap {
			pins = append(pins, fmt.Sprintf("q%d:%d→cpu%d", p.Queue, p.IRQ, p.CPU))
		}
		irqs := strings.Join(pins, " ")
		if irqs == "" {
			irqs = "-"
		}
		engine := h.Backend
		switch h.Role {
		case "receiver":
			engine = receiverEngine(h.Method, h.XDPMode)
		case "both":
			engine = h.Backend + " / " + receiverEngine(h.Method, h.XDPMode)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\n", h.Name, h.Role, h.Kernel, h.Iface, h.Driver, h.NUMANode, irqs, h.Tuned, engine)
	}
	tw.Flush()
	for _, h := range res.Hosts {
		for _, n := range h.Notes {
			fmt.Fprintf(w, "note: %s: %s\n", h.Name, n)
		}
	}
	for _, h := range res.Hosts {
		if sp := res.RSSSpread(h.Name); sp != "" {
			fmt.Fprintf(w, "rss spread: %s: %s\n", h.Name, sp)
		}
	}
	engineNotes(w, res.Hosts)
	burstNote(w, res)
	preflightTable(w, preflightOf(res))
	irqVerifyTable(w, res.Hosts)
	for _, h := range res.Hosts {
		for _, wn := range h.Warnings {
			fmt.Fprintf(w, "warning: %s: %s\n", h.Name, wn)
		}
	}
	for _, wn := range res.OtherWarnings() {
		fmt.Fprintf(w, "warning: %s\n", wn)
	}
	return w.err
}

// directionTable writes the books of each direction's flows taken
// together, in a run that turns flows round (nothing otherwise).
func directionTable(w io.Writer, dirs []coordinator.DirectionTotal) {
	section(w, dirs, "DIRECTION\tFLOWS\tSENT\tRECEIVED\tLOST\tLOSS\tLOST@SENDER\tLOST@NET\tLOST@RECEIVER\tRATE\tL1\t",
		func(tw io.Writer, d coordinator.DirectionTotal) {
			fmt.Fprintf(tw, "%s %s→%s\t%d\t%d\t%d\t%d\t%.4g%%\t%d\t%d\t%d\t%s\t%s\t\n", d.Direction, strings.Join(d.Senders, ","), strings.Join(d.Receivers, ","),
				d.Flows, d.Sent, d.Received, d.Lost, 100*d.LossRatio, d.LostSenderHost, d.LostNetwork, d.LostReceiverHost,
				results.FormatSI(d.PPS, "pps"), results.FormatSI(d.L1BPS, "b/s"))
		})
}

// latencyTable writes each flow's one-way delays, with the clock they
// are on (nothing when no flow was timed).
func latencyTable(w io.Writer, flows []coordinator.Flow) {
	flowSection(w, flows, "LATENCY (µs)\tSAMPLES\tMIN\tP50\tP90\tP99\tP99.9\tMAX\tMEAN\tJITTER\tPDV99\tCLOCK\t",
		func(fl *coordinator.Flow) bool { return fl.Latency != nil },
		func(tw io.Writer, fl *coordinator.Flow) {
			m := fl.Latency.Summary()
			fmt.Fprintf(tw, "%s→%s\t%d\t%g\t%g\t%g\t%g\t%g\t%g\t%.1f\t%.1f\t%g\t%s\t\n", fl.Sender, fl.Receiver, m.Samples,
				m.MinUs, m.P50Us, m.P90Us, m.P99Us, m.P999Us, m.MaxUs, m.MeanUs, m.JitterUs, m.PDVP99Us, clockText(fl.Latency))
		})
	stampLines(w, flows)
}

// flowSection writes a table of one row (row) per flow that has what it
// shows (has), under header; nothing when no flow has it.
func flowSection(w io.Writer, flows []coordinator.Flow, header string, has func(*coordinator.Flow) bool, row func(io.Writer, *coordinator.Flow)) {
	var with []*coordinator.Flow
	for i := range flows {
		if has(&flows[i]) {
			with = append(with, &flows[i])
		}
	}
	section(w, with, header, row)
}

// section writes, after a blank line, a right-aligned table of one row
// (row) per item under header; nothing without items.
func section[T any](w io.Writer, items []T, header string, row func(io.Writer, T)) {
	if len(items) == 0 {
		return
	}
	fmt.Fprintln(w)
	tw := newTab(w, tabwriter.AlignRight)
	fmt.Fprintln(tw, header)
	for _, it := range items {
		row(tw, it)
	}
	tw.Flush()
}

// spreadLine writes one start spread: its percentiles and what its
// clocks are worth.
func spreadLine(w io.Writer, what string, s *coordinator.Spread) {
	if s == nil {
		return
	}
	if s.Streams == 0 {
		fmt.Fprintf(w, "start spread of %s: no stream has a time (%d without)\n", what, s.Missing)
		return
	}
	fmt.Fprintf(w, "start spread of %s: p50 %.0f µs, p99 %.0f µs, max %.0f µs over %d streams", what, s.P50US, s.P99US, s.MaxUS, s.Streams)
	if s.Missing > 0 {
		fmt.Fprintf(w, " (%d without a time)", s.Missing)
	}
	fmt.Fprintf(w, "; %s", s.Clocks)
	if s.Clocks == coordinator.ClocksSynced || s.Clocks == coordinator.ClocksEstimated {
		fmt.Fprintf(w, ", each within ±%d µs", s.ClockErrorUS)
	}
	fmt.Fprintln(w)
}

// PathTruthTable writes what the path itself counted during a run (the
// lab's switch), a row per switch port.
func PathTruthTable(out io.Writer, t *coordinator.PathTruth) error {
	w := &errWriter{w: out}
	fmt.Fprintln(w, "\nswitch (the lab's own counts):")
	tw := newTab(w, tabwriter.AlignRight)
	fmt.Fprintln(tw, "PORT\tTO\tTEST IN\tTX\tDROPS\tPROGRAM\tQDISC\tLINK\t")
	for _, p := range t.SwitchPorts {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t\n", p.Name, p.To, p.TestPackets, p.TxPackets, p.Drops, p.ProgDrops, p.QdiscDrops, p.LinkDrops)
	}
	tw.Flush()
	var delays []string
	for _, p := range t.SwitchPorts {
		if p.DelayUs > 0 || p.JitterUs > 0 {
			d := (time.Duration(p.DelayUs) * time.Microsecond).String()
			if p.JitterUs > 0 {
				d += " ± " + (time.Duration(p.JitterUs) * time.Microsecond).String()
			}
			delays = append(delays, p.Name+" "+d)
		}
	}
	if len(delays) > 0 {
		fmt.Fprintf(w, "delay added before the switch (netem on each host's egress): %s\n", strings.Join(delays, ", "))
	}
	for _, d := range t.Directions {
		fmt.Fprintf(w, "switch drops %s: %d (its senders' ports on the way in, its receivers' on the way out)\n", d.Direction, d.Drops)
	}
	return w.err
}
