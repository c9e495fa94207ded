package topology

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/linerate/linerate/topology/cpuset"
)

// Report is the JSON contract of `linerate irq show` and `linerate irq
// plan` (docs/usage.md, "JSON of irq plan and irq show"). CPU is absent in show output.
type Report struct {
	Iface     string        `json:"iface"`
	Driver    string        `json:"driver"`
	PCI       string        `json:"pci"`
	NUMANode  int           `json:"numa_node"`
	LocalCPUs cpuset.Set    `json:"local_cpus"`
	Queues    []ReportQueue `json:"queues"`
	Skipped   []Skipped     `json:"skipped"`
	Warnings  []string      `json:"warnings"`
	// Notes are facts of the plan that ask nothing of a person (Plan.Notes).
	Notes []string `json:"notes,omitempty"`
}

// ReportQueue is one queue IRQ.
type ReportQueue struct {
	Queue     int    `json:"queue"`
	IRQ       int    `json:"irq"`
	Name      string `json:"name"`
	Dir       string `json:"dir"`
	CPU       *int   `json:"cpu,omitempty"`
	Current   string `json:"current"`
	Effective string `json:"effective,omitempty"`
	Managed   bool   `json:"managed,omitempty"`
}

// ShowReport describes a NIC without planning.
func ShowReport(n *NIC) *Report {
	r := baseReport(n, n.Warnings)
	for _, v := range n.Vectors {
		r.Queues = append(r.Queues, reportQueue(v))
	}
	return r
}

// PlanReport describes a plan.
func PlanReport(p *Plan) *Report {
	r := baseReport(p.NIC, p.Warnings)
	for _, a := range p.Assignments {
		q := reportQueue(a.Vector)
		cpu := a.CPU
		q.CPU = &cpu
		r.Queues = append(r.Queues, q)
	}
	r.Skipped = append(r.Skipped, p.Unplanned...)
	r.Notes = append(r.Notes, p.Notes...)
	return r
}

func baseReport(n *NIC, warnings []string) *Report {
	return &Report{
		Iface: n.Iface, Driver: n.Driver, PCI: n.PCI, NUMANode: n.NUMANode, LocalCPUs: n.LocalCPUs,
		Queues: []ReportQueue{}, Skipped: append([]Skipped{}, n.Skipped...), Warnings: append([]string{}, warnings...),
	}
}

func reportQueue(v Vector) ReportQueue {
	return ReportQueue{Queue: v.Queue, IRQ: v.IRQ, Name: v.Name, Dir: string(v.Dir), Current: v.Current, Effective: v.Effective, Managed: v.Managed}
}

// WriteTable renders the report for people.
func (r *Report) WriteTable(w io.Writer) error {
	node := fmt.Sprint(r.NUMANode)
	if r.NUMANode < 0 {
		node = "unknown (-1)"
	}
	pci := r.PCI
	if pci == "" {
		pci = "-"
	}
	fmt.Fprintf(w, "%s  driver %s  pci %s  numa node %s  local cpus %s\n\n", r.Iface, orDash(r.Driver), pci, node, r.LocalCPUs)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	planned := len(r.Queues) > 0 && r.Queues[0].CPU != nil
	if planned {
		fmt.Fprintln(tw, "QUEUE\tDIR\tIRQ\tNAME\tCURRENT\tEFFECTIVE\tPLANNED CPU\t")
	} else {
		fmt.Fprintln(tw, "QUEUE\tDIR\tIRQ\tNAME\tCURRENT\tEFFECTIVE\t")
	}
	for _, q := range r.Queues {
		cur := q.Current
		if q.Managed {
			cur += " (managed)"
		}
		if planned {
			fmt.Fprintf(tw, "%d\t%s\t%d\t%s\t%s\t%s\t%d\t\n", q.Queue, q.Dir, q.IRQ, q.Name, cur, orDash(q.Effective), *q.CPU)
		} else {
			fmt.Fprintf(tw, "%d\t%s\t%d\t%s\t%s\t%s\t\n", q.Queue, q.Dir, q.IRQ, q.Name, cur, orDash(q.Effective))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(r.Skipped) > 0 {
		fmt.Fprintln(w, "\nskipped:")
		for _, s := range r.Skipped {
			fmt.Fprintf(w, "  irq %d %s: %s\n", s.IRQ, orDash(s.Name), s.Reason)
		}
	}
	for _, s := range r.Notes {
		fmt.Fprintf(w, "note: %s\n", s)
	}
	for _, s := range r.Warnings {
		fmt.Fprintf(w, "warning: %s\n", s)
	}
	return nil
}

func orDash(s string) string {
	if strings.TrimSpace(s) == "" {
		return "-"
	}
	return s
}

// WriteTable renders what Apply did: the journal, then every change.
func (a *ApplyResult) WriteTable(w io.Writer) error {
	return WriteChanges(w, fmt.Sprintf("%s: journal %s", a.Iface, a.Journal), a.Changes, a.Warnings)
}

// WriteRestores renders what Restore did: every journal restored with
// its changes, or that stateDir held none.
func WriteRestores(w io.Writer, stateDir string, res []RestoreResult) error {
	if len(res) == 0 {
		_, err := fmt.Fprintf(w, "nothing to restore: no journal in %s\n", stateDir)
		return err
	}
	for _, rr := range res {
		title := fmt.Sprintf("%s: restored from %s", rr.Iface, rr.Journal)
		if rr.Owner != "" {
			title += fmt.Sprintf(" (written by %s)", rr.Owner)
		}
		if err := WriteChanges(w, title, rr.Changes, rr.Warnings); err != nil {
			return err
		}
		if err := WriteSettingChanges(w, rr.Settings); err != nil {
			return err
		}
	}
	return nil
}

// WriteSettingChanges renders the host settings a restore put back
// (nothing when there are none).
func WriteSettingChanges(w io.Writer, changes []SettingChange) error {
	if len(changes) == 0 {
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SETTING\tKEY\tFROM\tTO\tSTATUS\tNOTE\t")
	for _, c := range changes {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t\n", c.Kind, c.Key, orDash(short(c.From)), orDash(short(c.To)), c.Status, c.Note)
	}
	return tw.Flush()
}

// short cuts a long setting (an ethtool parameter set's JSON) for a table.
func short(s string) string {
	if len(s) > 40 {
		return s[:37] + "..."
	}
	return s
}

// WriteChanges renders the outcome of an apply or restore for people.
func WriteChanges(w io.Writer, title string, changes []Change, warnings []string) error {
	fmt.Fprintln(w, title)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "IRQ\tNAME\tFROM\tTO\tSTATUS\tNOTE\t")
	for _, c := range changes {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t\n", c.IRQ, c.Name, orDash(c.From), orDash(c.To), c.Status, c.Note)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, s := range warnings {
		fmt.Fprintf(w, "warning: %s\n", s)
	}
	return nil
}
