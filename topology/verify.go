package topology

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/linerate/linerate/topology/cpuset"
	"github.com/linerate/linerate/topology/interrupts"
)

// VerifyResult is, for each queue IRQ, which CPUs serviced it between two
// reads of /proc/interrupts.
type VerifyResult struct {
	Iface    string        `json:"iface"`
	Interval string        `json:"interval"`
	IRQs     []VerifiedIRQ `json:"irqs"`
	OffCPU   int           `json:"off_cpu"` // IRQs that fired outside their planned CPUs
}

// VerifiedIRQ is one queue IRQ's servicing CPUs.
type VerifiedIRQ struct {
	IRQ     int               `json:"irq"`
	Name    string            `json:"name"`
	Queue   int               `json:"queue"`
	Planned string            `json:"planned"` // CPUs it should fire on (journal, else smp_affinity_list)
	Source  string            `json:"source"`  // "journal" or "affinity"
	Fired   map[string]uint64 `json:"fired"`   // CPU → interrupts in the interval
	Total   uint64            `json:"total"`
	OffCPU  bool              `json:"off_cpu"`
}

// ReadInterrupts reads and parses /proc/interrupts from r.
func ReadInterrupts(r Root) (*interrupts.Table, error) {
	b, err := r.ReadFile("/proc/interrupts")
	if err != nil {
		return nil, fmt.Errorf("read /proc/interrupts: %w", err)
	}
	t, err := interrupts.Parse(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("read /proc/interrupts: %w", err)
	}
	return t, nil
}

// Verify samples /proc/interrupts, waits (wait is called once, between
// the two reads), samples again, and reports where each queue IRQ of n
// fired. The planned CPU comes from j when it has the IRQ, else from the
// IRQ's current smp_affinity_list.
func Verify(ctx context.Context, r Root, n *NIC, j *Journal, wait func(context.Context) error) (*VerifyResult, error) {
	before, err := ReadInterrupts(r)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	if err := wait(ctx); err != nil {
		return nil, err
	}
	after, err := ReadInterrupts(r)
	if err != nil {
		return nil, err
	}
	return compare(n, j, before, after, time.Since(start)), nil
}

func compare(n *NIC, j *Journal, before, after *interrupts.Table, d time.Duration) *VerifyResult {
	delta := interrupts.Delta(before, after)
	res := &VerifyResult{Iface: n.Iface, Interval: d.Round(time.Millisecond).String(), IRQs: []VerifiedIRQ{}}
	for _, v := range n.Vectors {
		vi := VerifiedIRQ{IRQ: v.IRQ, Name: v.Name, Queue: v.Queue, Fired: map[string]uint64{}, Source: "affinity"}
		planned, err := cpuset.ParseList(v.Current, 0)
		if err != nil {
			planned, _ = cpuset.ParseMask(v.Current)
		}
		if j != nil {
			if e := j.entry(v.IRQ); e != nil && e.CPU >= 0 {
				planned, vi.Source = cpuset.Of(e.CPU), "journal"
			}
		}
		vi.Planned = planned.String()
		cpus := make([]int, 0, len(delta[v.IRQ]))
		for c := range delta[v.IRQ] {
			cpus = append(cpus, c)
		}
		sort.Ints(cpus)
		for _, c := range cpus {
			k := delta[v.IRQ][c]
			vi.Fired[fmt.Sprint(c)] = k
			vi.Total += k
			if !planned.Contains(c) {
				vi.OffCPU = true
			}
		}
		if vi.OffCPU {
			res.OffCPU++
		}
		res.IRQs = append(res.IRQs, vi)
	}
	return res
}

// WriteTable renders a verification for people.
func (v *VerifyResult) WriteTable(w io.Writer) error {
	fmt.Fprintf(w, "%s: queue IRQs serviced over %s\n", v.Iface, v.Interval)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "QUEUE\tIRQ\tNAME\tPLANNED\tFIRED ON (cpu:count)\tTOTAL\t")
	for _, q := range v.IRQs {
		var parts []string
		for c, k := range q.Fired {
			parts = append(parts, fmt.Sprintf("%s:%d", c, k))
		}
		sort.Strings(parts)
		flag := ""
		if q.OffCPU {
			flag = "  OFF-CPU"
		}
		fmt.Fprintf(tw, "%d\t%d\t%s\t%s (%s)\t%s\t%d%s\t\n", q.Queue, q.IRQ, q.Name, q.Planned, q.Source, orDash(strings.Join(parts, " ")), q.Total, flag)
	}
	return tw.Flush()
}
