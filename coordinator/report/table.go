package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/linerate/linerate/coordinator/results"
)

// errWriter remembers the first write error so that a report can be
// printed with plain Fprintf calls and fail once.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}

func newTab(w io.Writer, flags uint) *tabwriter.Writer {
	return tabwriter.NewWriter(w, 0, 4, 2, ' ', flags)
}

// header prints the document's first lines.
func header(w io.Writer, doc *results.Document) {
	fmt.Fprintf(w, "%s %s", doc.Kind, doc.ID)
	if doc.Name != "" {
		fmt.Fprintf(w, " %q", doc.Name)
	}
	fmt.Fprintf(w, ": %s", doc.Status)
	if doc.Error != "" {
		fmt.Fprintf(w, " — %s", doc.Error)
	}
	fmt.Fprintf(w, "\ncreated %s", doc.Created.UTC().Format("2006-01-02 15:04:05 MST"))
	if !doc.Finished.IsZero() && doc.Finished.After(doc.Created) {
		fmt.Fprintf(w, ", took %s", doc.Finished.Sub(doc.Created).Round(time.Second))
	}
	n := trialCount(doc)
	plural := "s"
	if n == 1 {
		plural = ""
	}
	fmt.Fprintf(w, ", %d trial%s, tool %s\n", n, plural, orDash(doc.Tool))
}

// Table writes the terminal report: the summary per frame size, the
// flows of the trials that set the throughput, and the hosts.
func Table(out io.Writer, doc *results.Document) error {
	w := &errWriter{w: out}
	header(w, doc)
	sizes := sizeViews(doc)
	fmt.Fprintln(w)
	tw := newTab(w, tabwriter.AlignRight)
	fmt.Fprintln(tw, "SIZE\tTHROUGHPUT\tL1\t%LINE\tLINE RATE\tLOSS\tNDR\tPDR\tTRIALS\t")
	for _, s := range sizes {
		size := s.Key
		if s.GeneratorLimited {
			size += " (generator-limited)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.2f\t%s\t%s\t%s\t%s\t%d\t\n", size, results.FormatPPS(s.ThroughputPPS), formatBPS(s.L1BPS),
			s.LineRatePct, optPPS(s.LinePPS), formatRatio(s.LossRatio), optPPS(s.NDRPPS), pdr(s.SizeResult), s.Trials)
	}
	tw.Flush()
	for _, s := range sizes {
		if s.Basis != "" {
			fmt.Fprintf(w, "%s: line rate %s: %s\n", s.Key, results.FormatPPS(s.LinePPS), s.Basis)
		}
	}
	for _, s := range sizes {
		if s.Note != "" {
			fmt.Fprintf(w, "%s: %s\n", s.Key, s.Note)
		}
	}
	sizeLatencyTable(w, sizes)
	sizeBackToBackTable(w, sizes)

	fmt.Fprintln(w)
	tw = newTab(w, tabwriter.AlignRight)
	fmt.Fprintln(tw, "SIZE\tTRIAL\tFLOW\tSENT\tRECEIVED\tLOST\tLOSS\tLOST@SENDER\tLOST@NET\tLOST@RECEIVER\tRATE\t%LINE\t")
	for _, s := range sizes {
		if s.Trial == nil {
			fmt.Fprintf(tw, "%s\t-\tno trial set the throughput\t\t\t\t\t\t\t\t\t\t\n", s.Key)
			continue
		}
		for _, f := range s.Trial.Flows {
			name := f.Sender + "→" + f.Receiver
			if f.GeneratorLimited {
				name += " (generator-limited)"
			}
			fmt.Fprintf(tw, "%s\t%d\t%s\t%d\t%d\t%d\t%s\t%d\t%d\t%d\t%s\t%.2f\t\n", s.Key, s.Trial.N, name, f.Sent, f.Received, f.Lost,
				formatRatio(f.LossRatio), f.LostSenderHost, f.LostNetwork, f.LostReceiverHost, results.FormatPPS(f.PPS), f.LineRatePct)
		}
	}
	tw.Flush()

	fmt.Fprintln(w)
	tw = newTab(w, 0)
	fmt.Fprintln(tw, "HOST\tROLE\tKERNEL\tDRIVER\tFIRMWARE\tIFACE\tLINK\tNUMA\tENGINE\tIRQS")
	for _, h := range doc.Hosts {
		engine := h.Backend
		if h.Role == "receiver" || engine == "" {
			engine = receiverEngine(h.Method, h.XDPMode)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\n", h.Name, h.Role, orDash(h.Kernel), orDash(h.Driver), orDash(h.Firmware),
			orDash(h.Iface), formatSpeed(h.LinkSpeedMbps), h.NUMANode, engine, irqCPUs(h))
	}
	tw.Flush()
	if doc.Run != nil {
		preflightTable(w, preflightOf(doc.Run))
		irqVerifyTable(w, doc.Run.Hosts)
		for _, warn := range doc.Run.OtherWarnings() {
			fmt.Fprintf(w, "warning: %s\n", warn)
		}
	}
	return w.err
}

// sizeLatencyTable writes each size's one-way delays at its throughput
// rate: its RFC 2544 latency test's (all its latency trials), else its
// throughput trial's (nothing when no size timed its packets).
func sizeLatencyTable(w io.Writer, sizes []sizeView) {
	timed := false
	for _, s := range sizes {
		timed = timed || sizeLatency(s) != nil
	}
	if !timed {
		return
	}
	fmt.Fprintln(w)
	tw := newTab(w, tabwriter.AlignRight)
	fmt.Fprintln(tw, "LATENCY (µs)\tOVER\tSAMPLES\tMIN\tP50\tP99\tP99.9\tMAX\tJITTER\tCLOCK\t")
	for _, s := range sizes {
		l := sizeLatency(s)
		if l == nil {
			continue
		}
		over := "the throughput trial"
		if s.Latency != nil {
			over = fmt.Sprintf("%d latency trials", s.LatencyTrials)
		}
		m := l.Summary()
		fmt.Fprintf(tw, "%s\t%s\t%d\t%g\t%g\t%g\t%g\t%g\t%.1f\t%s\t\n", s.Key, over, m.Samples, m.MinUs, m.P50Us, m.P99Us, m.P999Us, m.MaxUs, m.JitterUs, clockText(l))
	}
	tw.Flush()
}

// irqCPUs says where a host's queue IRQs went: "4 → cpu 2,4,6,8".
func irqCPUs(h results.Fingerprint) string {
	if len(h.IRQMap) == 0 {
		return "-"
	}
	cpus := make([]string, 0, len(h.IRQMap))
	for _, p := range h.IRQMap {
		cpus = append(cpus, strconv.Itoa(p.CPU))
	}
	return fmt.Sprintf("%d → cpu %s", len(h.IRQMap), strings.Join(cpus, ","))
}

func optPPS(v float64) string {
	if v <= 0 {
		return "-"
	}
	return results.FormatPPS(v)
}

func pdr(r results.SizeResult) string {
	if r.PDRPPS <= 0 {
		return "-"
	}
	return fmt.Sprintf("%s @%s", results.FormatPPS(r.PDRPPS), formatRatio(r.PDRGoal))
}

// List writes `results list`: one line per stored document.
func List(out io.Writer, entries []results.Entry) error {
	w := &errWriter{w: out}
	tw := newTab(w, 0)
	fmt.Fprintln(tw, "ID\tKIND\tNAME\tSTATUS\tCREATED\tSIZES\tSUMMARY")
	for _, e := range entries {
		if e.Problem != "" {
			fmt.Fprintf(tw, "%s\t?\t\tunreadable\t\t\t%s\n", e.ID, e.Problem)
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", e.ID, e.Kind, orDash(e.Name), e.Status,
			e.Created.UTC().Format("2006-01-02 15:04"), strings.Join(e.Sizes, ","), orDash(e.Summary))
	}
	tw.Flush()
	return w.err
}

// Comparison writes `results compare`: per frame size A, B and the
// deltas, the regressions flagged, sizes on one side only, and the
// hosts whose fingerprints differ.
func Comparison(out io.Writer, c *results.Comparison) error {
	w := &errWriter{w: out}
	ref := func(tag string, r results.Ref) {
		fmt.Fprintf(w, "%s: %s %s", tag, r.Kind, r.ID)
		if r.Name != "" {
			fmt.Fprintf(w, " %q", r.Name)
		}
		fmt.Fprintf(w, " (%s, %s, tool %s)\n", r.Status, r.Created.UTC().Format("2006-01-02 15:04"), orDash(r.Tool))
	}
	ref("A", c.A)
	ref("B", c.B)
	fmt.Fprintf(w, "threshold %s\n\n", strconv.FormatFloat(100*c.Threshold, 'f', -1, 64)+"%")
	tw := newTab(w, tabwriter.AlignRight)
	fmt.Fprintln(tw, "SIZE\tA\tB\tΔ\tΔ%\tLOSS A\tLOSS B\tNDR Δ%\tPDR Δ%\t")
	for _, s := range c.Sizes {
		flag := ""
		if s.Regression {
			flag = "REGRESSION: " + strings.Join(s.Why, "; ")
		} else if len(s.Why) > 0 {
			flag = strings.Join(s.Why, "; ")
		}
		if flag != "" {
			flag = "  " + flag
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%+.2f%%\t%s\t%s\t%s\t%s\t%s\n", s.Key(), results.FormatPPS(s.ThroughputA), results.FormatPPS(s.ThroughputB),
			signedPPS(s.DeltaPPS), s.DeltaPct, formatRatio(s.LossA), formatRatio(s.LossB), ratePct(s.NDR), ratePct(s.PDR), flag)
	}
	tw.Flush()
	latencyComparison(w, c)
	if len(c.OnlyA) > 0 {
		fmt.Fprintf(w, "only in A: %s\n", strings.Join(c.OnlyA, ", "))
	}
	if len(c.OnlyB) > 0 {
		fmt.Fprintf(w, "only in B: %s\n", strings.Join(c.OnlyB, ", "))
	}
	if len(c.Spec) > 0 {
		fmt.Fprintf(w, "specs differ in: %s\n", strings.Join(c.Spec, ", "))
	}
	if len(c.Hosts) > 0 {
		fmt.Fprintln(w, "\nhosts that differ:")
		for _, h := range c.Hosts {
			switch {
			case h.B == "":
				fmt.Fprintf(w, "  %s (%s): only in A\n", h.A, h.Role)
				continue
			case h.A == "":
				fmt.Fprintf(w, "  %s (%s): only in B\n", h.B, h.Role)
				continue
			case h.A != h.B:
				fmt.Fprintf(w, "  %s → %s (%s, paired by role)\n", h.A, h.B, h.Role)
			default:
				fmt.Fprintf(w, "  %s (%s)\n", h.A, h.Role)
			}
			for _, f := range h.Fields {
				if f.Detail != "" {
					fmt.Fprintf(w, "    %s: %s\n", f.Field, f.Detail)
					continue
				}
				fmt.Fprintf(w, "    %s: %s → %s\n", f.Field, orDash(f.A), orDash(f.B))
			}
		}
	}
	if c.Regression {
		fmt.Fprintln(w, "\nregression: B is worse than A beyond the threshold")
	} else {
		fmt.Fprintln(w, "\nno regression beyond the threshold")
	}
	return w.err
}

// latencyComparison writes the sizes whose throughput trials timed
// their packets on both sides: p50 and p99 one-way delays and their
// clocks (nothing when none did).
func latencyComparison(w io.Writer, c *results.Comparison) {
	var sizes []results.SizeDelta
	for _, s := range c.Sizes {
		if s.Latency != nil {
			sizes = append(sizes, s)
		}
	}
	if len(sizes) == 0 {
		return
	}
	fmt.Fprintf(w, "\none-way latency at the throughput rate (µs), flagged when the p99 is %s%% higher\n", strconv.FormatFloat(100*c.LatencyThreshold, 'f', -1, 64))
	tw := newTab(w, tabwriter.AlignRight)
	fmt.Fprintln(tw, "SIZE\tP50 A\tP50 B\tP99 A\tP99 B\tP99 Δ%\tCLOCKS\t")
	for _, s := range sizes {
		l := s.Latency
		fmt.Fprintf(tw, "%s\t%g\t%g\t%g\t%g\t%+.2f%%\t%s / %s\t\n", s.Key(), l.P50A, l.P50B, l.P99A, l.P99B, l.DeltaPct, l.ClockA, l.ClockB)
	}
	tw.Flush()
}

func signedPPS(v float64) string {
	if v < 0 {
		return "-" + results.FormatPPS(-v)
	}
	return "+" + results.FormatPPS(v)
}

func ratePct(r *results.RateDelta) string {
	if r == nil || r.A == 0 || r.B == 0 {
		return "-"
	}
	return fmt.Sprintf("%+.2f%%", r.DeltaPct)
}
