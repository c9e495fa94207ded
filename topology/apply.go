package topology

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"time"

	"github.com/hashicorp/go-hclog"
	"golang.org/x/sys/unix"

	"github.com/linerate/linerate/internal/ctxsleep"
	"github.com/linerate/linerate/topology/cpuset"
)

// Sentinel errors of Apply and Restore.
var (
	// ErrManagedIRQ is returned when the kernel owns this IRQ's affinity (EIO
	// before 6.12, EPERM after, or a 0444 affinity file). Skipped, never a
	// failure.
	ErrManagedIRQ = errors.New("managed irq: the kernel owns its affinity")
	// ErrNoPermission is returned when affinity files cannot be written here
	// (not root, or /proc/irq read-only as in containers). Apply rolls back.
	ErrNoPermission = errors.New("no permission to change irq affinity")
	// ErrNotApplied is returned when the write succeeded but reading back
	// shows another value.
	ErrNotApplied = errors.New("kernel did not apply the affinity")
	// ErrCPUUnavailable is returned when no candidate CPU accepted the IRQ
	// (offline or out of vectors).
	ErrCPUUnavailable = errors.New("no CPU accepted the irq")
	// ErrIRQVanished is returned when the IRQ disappeared (interface
	// reconfigured).
	ErrIRQVanished = errors.New("irq vanished")
)

// Change statuses.
const (
	StatusApplied   = "applied"
	StatusUnchanged = "unchanged" // already there; nothing written
	StatusManaged   = "managed"   // kernel-managed; skipped
	StatusRestored  = "restored"
	StatusSkipped   = "skipped" // restore: vanished or renamed IRQ
)

// Change is what happened to one IRQ.
type Change struct {
	IRQ       int    `json:"irq"`
	Name      string `json:"name"`
	Queue     int    `json:"queue"`
	From      string `json:"from"`
	To        string `json:"to"`
	ReadBack  string `json:"read_back,omitempty"`
	Effective string `json:"effective,omitempty"`
	Status    string `json:"status"`
	Note      string `json:"note,omitempty"`
}

// ApplyResult reports an Apply.
type ApplyResult struct {
	Iface    string   `json:"iface"`
	Journal  string   `json:"journal"`
	Changes  []Change `json:"changes"`
	Warnings []string `json:"warnings"`
}

// ApplyOptions configure Apply.
type ApplyOptions struct {
	StateDir string // journal directory; DefaultStateDir when empty
	// IRQBalance is IRQBalanceRefuse (default: stop when irqbalance runs)
	// or IRQBalanceIgnore.
	IRQBalance IRQBalance
	// RootName is recorded in the journal ("/" for the live host).
	RootName string
	// Owner is recorded in the journal (AgentOwner, OwnerIRQApply). A
	// journal of another owner on the interface is refused
	// (ErrJournalOwner); one without an owner is taken over.
	Owner  string
	Logger hclog.Logger
	// Sleep waits between retries; tests replace it. Default honours ctx.
	Sleep func(ctx context.Context, d time.Duration) error
}

func (o *ApplyOptions) defaults() {
	if o.StateDir == "" {
		o.StateDir = DefaultStateDir
	}
	if o.IRQBalance == "" {
		o.IRQBalance = IRQBalanceRefuse
	}
	if o.Logger == nil {
		o.Logger = hclog.NewNullLogger()
	}
	if o.Sleep == nil {
		o.Sleep = ctxsleep.Sleep
	}
}

// errClass is how Apply reacts to a failed affinity write.
type errClass int

const (
	classFatal    errClass = iota // stop, roll back
	classManaged                  // skip the IRQ, report
	classNoPerm                   // stop, roll back
	classRetry                    // transient: retry with backoff
	classNextCPU                  // this CPU cannot take it: try the next candidate
	classVanished                 // the IRQ is gone
)

func classify(err error) errClass {
	switch {
	case errors.Is(err, unix.EIO), errors.Is(err, unix.EPERM):
		return classManaged
	case errors.Is(err, unix.EACCES), errors.Is(err, unix.EROFS):
		return classNoPerm
	case errors.Is(err, unix.EBUSY), errors.Is(err, unix.EAGAIN):
		return classRetry
	case errors.Is(err, unix.ENOSPC), errors.Is(err, unix.EINVAL), errors.Is(err, unix.ERANGE), errors.Is(err, unix.EOVERFLOW):
		return classNextCPU
	case errors.Is(err, fs.ErrNotExist):
		return classVanished
	}
	return classFatal
}

func explain(err error) string {
	switch {
	case errors.Is(err, unix.ENOSPC):
		return "no free interrupt vector on that CPU"
	case errors.Is(err, unix.EINVAL), errors.Is(err, unix.ERANGE), errors.Is(err, unix.EOVERFLOW):
		return "CPU offline or out of range"
	}
	return err.Error()
}

const maxRetries = 5

// Apply journals the original affinity of every planned IRQ, then pins
// each to its CPU. Managed IRQs are skipped and reported. On a hard
// failure everything written is rolled back and the journal is returned
// to its previous state.
func Apply(ctx context.Context, r Root, p *Plan, opts ApplyOptions) (*ApplyResult, error) {
	opts.defaults()
	n := p.NIC
	log := opts.Logger.Named("topology").With("iface", n.Iface)
	res := &ApplyResult{Iface: n.Iface, Journal: JournalPath(opts.StateDir, n.Iface), Changes: []Change{}, Warnings: []string{}}
	warn, err := checkIRQBalance(r, p, opts.IRQBalance)
	if err != nil {
		return nil, err
	}
	if warn != "" {
		res.Warnings = append(res.Warnings, warn)
		log.Warn(warn)
	}

	prev, err := LoadJournal(opts.StateDir, n.Iface)
	if err != nil {
		return nil, fmt.Errorf("apply %s: %w", n.Iface, err)
	}
	if prev != nil && !prev.ownedBy(opts.Owner) {
		return nil, fmt.Errorf("apply %s: journal %s was written by %s, not %q: %w (restore it first: linerate irq restore --iface %s)",
			n.Iface, res.Journal, prev.ownerName(), opts.Owner, ErrJournalOwner, n.Iface)
	}
	j := &Journal{Version: journalVersion, Iface: n.Iface, PCI: n.PCI, Driver: n.Driver, Root: opts.RootName, Owner: opts.Owner, Created: time.Now().UTC()}
	if prev != nil {
		cp := *prev
		cp.Entries = append([]JournalEntry(nil), prev.Entries...)
		cp.Owner = opts.Owner
		j = &cp
	}
	for _, a := range p.Assignments {
		if a.Managed || j.entry(a.IRQ) != nil {
			continue // keep the first original: restore goes back to before linerate
		}
		j.Entries = append(j.Entries, JournalEntry{IRQ: a.IRQ, Name: a.Name, File: affinityFile(r, a.IRQ), Original: a.Current, CPU: -1})
	}
	if err := j.save(opts.StateDir); err != nil {
		return nil, fmt.Errorf("apply %s: journal originals before writing: %w", n.Iface, err)
	}

	var written []JournalEntry
	fail := func(err error) (*ApplyResult, error) {
		rbErr := rollback(r, written)
		var jErr error
		if prev == nil {
			jErr = removeJournal(opts.StateDir, n.Iface)
		} else {
			jErr = prev.save(opts.StateDir)
		}
		if rbErr != nil || jErr != nil {
			return res, fmt.Errorf("%w; rollback failed too: %v %v (run `linerate irq restore`)", err, rbErr, jErr)
		}
		log.Error("apply failed, rolled back", "error", err, "written", len(written))
		return res, err
	}

	for _, a := range p.Assignments {
		if err := ctx.Err(); err != nil {
			return fail(fmt.Errorf("apply %s: interrupted: %w", n.Iface, err))
		}
		ch := Change{IRQ: a.IRQ, Name: a.Name, Queue: a.Queue, From: a.Current, To: strconv.Itoa(a.CPU)}
		if a.Managed {
			ch.Status, ch.Note = StatusManaged, "affinity file is read-only (kernel-managed irq)"
			res.Changes = append(res.Changes, ch)
			continue
		}
		e := j.entry(a.IRQ)
		cpu, err := pin(ctx, r, n, p.Candidates, a, e.File, opts.Sleep, &ch)
		switch {
		case errors.Is(err, ErrManagedIRQ):
			ch.Status, ch.Note = StatusManaged, err.Error()
			res.Changes = append(res.Changes, ch)
			log.Warn("irq is kernel-managed, skipped", "irq", a.IRQ, "name", a.Name)
			continue
		case err != nil:
			res.Changes = append(res.Changes, ch)
			return fail(fmt.Errorf("apply %s: %w", n.Iface, err))
		}
		if ch.Status == "" {
			ch.Status = StatusApplied
			written = append(written, *e)
		}
		e.CPU = cpu
		if ch.Effective != "" {
			if eff, err := cpuset.ParseList(ch.Effective, 0); err == nil && !eff.IsSubsetOf(cpuset.Of(cpu)) {
				// Not a warning: nothing is wrong and nothing is to be
				// done; the kernel makes the move at the IRQ's next
				// interrupt. Where it then fired is Compare's to say
				// (after a run's traffic), and an IRQ that stayed on
				// its old CPU is a warning there.
				ch.Note = joinNote(ch.Note, fmt.Sprintf("effective affinity %s until its next interrupt (x86 moves an IRQ at an interrupt)", ch.Effective))
				log.Debug("irq move pending", "irq", a.IRQ, "name", a.Name, "effective", ch.Effective, "cpu", cpu)
			}
		}
		res.Changes = append(res.Changes, ch)
		log.Debug("pinned", "irq", a.IRQ, "name", a.Name, "cpu", cpu)
	}
	if err := j.save(opts.StateDir); err != nil {
		return fail(fmt.Errorf("apply %s: record applied CPUs: %w", n.Iface, err))
	}
	return res, nil
}

func affinityFile(r Root, irq int) string {
	if exists(r, fmt.Sprintf("/proc/irq/%d/smp_affinity_list", irq)) {
		return "smp_affinity_list"
	}
	return "smp_affinity"
}

// formatAffinity renders cpus for the given affinity file.
func formatAffinity(file string, cpus cpuset.Set, nrCPUs int) string {
	if file == "smp_affinity" {
		return cpus.Mask(nrCPUs)
	}
	return cpus.String()
}

func parseAffinity(file, s string) (cpuset.Set, error) {
	if file == "smp_affinity" {
		return cpuset.ParseMask(s)
	}
	return cpuset.ParseList(s, 0)
}

// pin writes one IRQ's affinity, walking the candidate CPUs from the
// planned one on ENOSPC/EINVAL and retrying EBUSY/EAGAIN. It returns the
// CPU the IRQ landed on.
func pin(ctx context.Context, r Root, n *NIC, cands []int, a Assignment, file string,
	sleep func(context.Context, time.Duration) error, ch *Change) (int, error) {
	fpath := fmt.Sprintf("/proc/irq/%d/%s", a.IRQ, file)
	order := []int{a.CPU}
	for i, c := range cands {
		if c == a.CPU {
			order = append(order, cands[i+1:]...)
			order = append(order, cands[:i]...)
			break
		}
	}
	if cur, err := parseAffinity(file, a.Current); err == nil && cur.Equal(cpuset.Of(a.CPU)) {
		ch.Status, ch.ReadBack, ch.Effective = StatusUnchanged, a.Current, a.Effective
		return a.CPU, nil
	}
	var tried []string
	for _, cpu := range order {
		val := formatAffinity(file, cpuset.Of(cpu), n.NrCPUs)
		var err error
		for attempt := 0; ; attempt++ {
			err = r.WriteFile(fpath, []byte(val+"\n"))
			if err == nil || classify(err) != classRetry || attempt >= maxRetries {
				break
			}
			if serr := sleep(ctx, time.Duration(10<<attempt)*time.Millisecond); serr != nil {
				return -1, fmt.Errorf("irq %d (%s) -> cpu %d: %w", a.IRQ, a.Name, cpu, serr)
			}
		}
		what := fmt.Sprintf("irq %d (%s) -> cpu %d: write %s", a.IRQ, a.Name, cpu, fpath)
		if err != nil {
			switch classify(err) {
			case classManaged:
				return -1, fmt.Errorf("%s: %v: %w", what, err, ErrManagedIRQ)
			case classNoPerm:
				return -1, fmt.Errorf("%s: %w: %w", what, err, ErrNoPermission)
			case classNextCPU:
				tried = append(tried, fmt.Sprintf("cpu %d: %s", cpu, explain(err)))
				continue
			case classVanished:
				return -1, fmt.Errorf("%s: %w: %w", what, err, ErrIRQVanished)
			case classRetry:
				return -1, fmt.Errorf("%s: still busy after %d retries: %w", what, maxRetries, err)
			default:
				return -1, fmt.Errorf("%s: %w", what, err)
			}
		}
		back, rerr := readString(r, fpath)
		if rerr != nil {
			return -1, fmt.Errorf("%s: read back: %w", what, rerr)
		}
		ch.ReadBack, ch.To = back, strconv.Itoa(cpu)
		if got, perr := parseAffinity(file, back); perr != nil || !got.Equal(cpuset.Of(cpu)) {
			return -1, fmt.Errorf("%s: wrote %q, read back %q: %w", what, val, back, ErrNotApplied)
		}
		if eff, err := readString(r, fmt.Sprintf("/proc/irq/%d/effective_affinity_list", a.IRQ)); err == nil {
			ch.Effective = eff
		}
		if len(tried) > 0 {
			ch.Note = fmt.Sprintf("planned cpu %d refused (%s); pinned to cpu %d", a.CPU, tried[0], cpu)
		}
		return cpu, nil
	}
	return -1, fmt.Errorf("irq %d (%s): every candidate CPU refused it (%v): %w", a.IRQ, a.Name, tried, ErrCPUUnavailable)
}

// rollback writes back the originals of entries, newest first.
func rollback(r Root, entries []JournalEntry) error {
	var errs []error
	for i := len(entries) - 1; i >= 0; i-- {
		e := entries[i]
		f := fmt.Sprintf("/proc/irq/%d/%s", e.IRQ, e.File)
		if err := r.WriteFile(f, []byte(e.Original+"\n")); err != nil && classify(err) != classManaged {
			errs = append(errs, fmt.Errorf("roll back irq %d (%s) to %s: %w", e.IRQ, e.Name, e.Original, err))
		}
	}
	return errors.Join(errs...)
}
