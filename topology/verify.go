package topology

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/linerate/linerate/topology/cpuset"
	"github.com/linerate/linerate/topology/interrupts"
)

// NoQueueIRQs is why a NIC is neither tuned nor verified: its interface
// has no device of its own (veth, a bridge, the netns lab) and so no queue
// IRQs.
const NoQueueIRQs = "no queue IRQs (virtual device)"

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
	// Note says why the counts are not a plain difference: the IRQ was
	// missing from one read, or a counter went down between them.
	Note string `json:"note,omitempty"`
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
	return Compare(n, j, before, after, time.Since(start)), nil
}

// Compare is where each queue IRQ of n fired between the reads before and
// after, d apart. The planned CPU comes from j when it has the IRQ (the
// plan that was applied), else from the IRQ's current affinity as n
// read it.
//
// An IRQ whose effective affinity was still outside its planned CPUs
// when n was read (a move the kernel had not made yet) fires on that old
// CPU until the move completes: x86 moves it at an interrupt, and
// interrupts already on their way reach the old CPU (two were seen in a
// TCG guest). Interrupts on the old CPU are not off its CPUs, and a Note
// says so, when the IRQ also fired on its planned CPUs (the move was
// made) or fired only once (the interrupt that moves it); otherwise they
// are: an IRQ that stays on its old CPU was not moved.
//
// An IRQ missing from either read has no counts (never off its CPUs),
// with a Note saying which read lacked it. A CPU whose counter went down
// (the IRQ freed and requested again) counts its value after, as
// interrupts.Delta does, with a Note naming the CPUs.
func Compare(n *NIC, j *Journal, before, after *interrupts.Table, d time.Duration) *VerifyResult {
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
		vi.Note = countNote(before, after, v.IRQ)
		cpus := make([]int, 0, len(delta[v.IRQ]))
		for c := range delta[v.IRQ] {
			cpus = append(cpus, c)
		}
		sort.Ints(cpus)
		var off []int
		var offCount uint64
		for _, c := range cpus {
			k := delta[v.IRQ][c]
			vi.Fired[fmt.Sprint(c)] = k
			vi.Total += k
			if !planned.Contains(c) {
				off, offCount = append(off, c), offCount+k
			}
		}
		vi.OffCPU = len(off) > 0
		if vi.OffCPU && (offCount == 1 || vi.Total > offCount) && movePending(v, planned, off) {
			vi.OffCPU = false
			times := "once"
			if offCount > 1 {
				times = fmt.Sprintf("%d times", offCount)
			}
			vi.Note = joinNote(vi.Note, fmt.Sprintf("fired %s on CPU %s, its effective affinity before the move to %s (x86 moves an IRQ at an interrupt; those on their way reach the old CPU)", times, cpuset.Of(off...).String(), vi.Planned))
		}
		if vi.OffCPU {
			res.OffCPU++
		}
		res.IRQs = append(res.IRQs, vi)
	}
	return res
}

// movePending reports whether v's effective affinity, as n read it, was
// still outside planned and includes every CPU of cpus: the IRQ's move
// to planned was pending, and those CPUs are where it was.
func movePending(v Vector, planned cpuset.Set, cpus []int) bool {
	eff, err := cpuset.ParseList(v.Effective, 0)
	if err != nil || eff.IsEmpty() || eff.IsSubsetOf(planned) {
		return false
	}
	for _, c := range cpus {
		if !eff.Contains(c) {
			return false
		}
	}
	return true
}

// joinNote appends b to the note a.
func joinNote(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// countNote is why irq's counts between before and after are not a plain
// difference, "" when they are.
func countNote(before, after *interrupts.Table, irq int) string {
	b, inBefore := before.ByNumber(irq)
	a, inAfter := after.ByNumber(irq)
	switch {
	case !inBefore && !inAfter:
		return "not in /proc/interrupts before or after: no counts"
	case !inBefore:
		return "not in /proc/interrupts before (requested during the interval): no counts"
	case !inAfter:
		return "not in /proc/interrupts after (freed during the interval): no counts"
	}
	var down []int
	for cpu, k := range a.Counts {
		if k < b.Counts[cpu] {
			down = append(down, cpu)
		}
	}
	if len(down) == 0 {
		return ""
	}
	sort.Ints(down)
	return fmt.Sprintf("counter went down on CPU %s (the IRQ was freed and requested again): its count after is taken", cpuset.Of(down...).String())
}

// FiredOn is where the IRQ fired as people read it, "cpu:count" in CPU
// order ("5:7 6:1"), "-" when it did not fire.
func (q VerifiedIRQ) FiredOn() string {
	if len(q.Fired) == 0 {
		return "-"
	}
	cpus := make([]int, 0, len(q.Fired))
	for c := range q.Fired {
		if n, err := strconv.Atoi(c); err == nil {
			cpus = append(cpus, n)
		}
	}
	sort.Ints(cpus)
	parts := make([]string, len(cpus))
	for i, c := range cpus {
		parts[i] = fmt.Sprintf("%d:%d", c, q.Fired[strconv.Itoa(c)])
	}
	return strings.Join(parts, " ")
}

// WriteTable renders a verification for people.
func (v *VerifyResult) WriteTable(w io.Writer) error {
	fmt.Fprintf(w, "%s: queue IRQs serviced over %s\n", v.Iface, v.Interval)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "QUEUE\tIRQ\tNAME\tPLANNED\tFIRED ON (cpu:count)\tTOTAL\t")
	for _, q := range v.IRQs {
		flag := ""
		if q.OffCPU {
			flag = "  OFF-CPU"
		}
		fmt.Fprintf(tw, "%d\t%d\t%s\t%s (%s)\t%s\t%d%s\t\n", q.Queue, q.IRQ, q.Name, q.Planned, q.Source, q.FiredOn(), q.Total, flag)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, q := range v.IRQs {
		if q.Note != "" {
			if _, err := fmt.Fprintf(w, "  irq %d: %s\n", q.IRQ, q.Note); err != nil {
				return err
			}
		}
	}
	return nil
}
