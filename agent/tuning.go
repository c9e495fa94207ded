package agent

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/hashicorp/go-hclog"

	"github.com/linerate/linerate/doctor"
	"github.com/linerate/linerate/topology"
	"github.com/linerate/linerate/topology/cpuset"
)

// tuner pins the data NIC's queue IRQs (journalled) and restores them, and
// remembers what it pinned: the CPUs and queues a send defaults to.
type tuner struct {
	root     *topology.DirRoot
	iface    string
	stateDir string
	rootName string // the root as the journal records it
	// owner is the journal's owner: topology.AgentOwner of the agent's
	// name and iface. The agent restores and extends only its own.
	owner string
	// pre applies a Tune's fixes (journaled in the same journal) and
	// gives every restore the restorers of their settings.
	pre *preflight
	log hclog.Logger

	mu     sync.Mutex
	cpus   []int // CPUs tune pinned queues to, in queue order
	queues []int // the queues of cpus
	pinned int   // IRQs tune pinned
}

// tuneOptions are a Tune request.
type tuneOptions struct {
	// threads is how many queues to pin (0: every queue).
	threads int
	// irqbalance is "" or topology.IRQBalanceRefuse (stop when
	// irqbalance runs) or topology.IRQBalanceIgnore.
	irqbalance topology.IRQBalance
	exclude    []int // CPUs to keep queues off
	// fixes are the fix classes to apply before the IRQs are pinned;
	// with fixOnly the IRQs are left alone. addrs are the run's test
	// addresses (the notrack class).
	fixes   []doctor.FixClass
	fixOnly bool
	addrs   []netip.Addr
	// fixCPUs are, with fixOnly, the CPUs the run uses (nil: the checks'
	// default, the NIC's local CPUs).
	fixCPUs []int
}

// tuning is what tune did.
type tuning struct {
	journal  string
	numa     int
	report   *topology.Report // the plan: pinned and managed queues, skipped IRQs
	changes  []topology.Change
	warnings []string
	// fixed are the settings the fixes changed.
	fixed []doctor.Applied
	// fixOnly: the IRQs were left alone (report is nil).
	fixOnly bool
}

// tune plans the NIC's queue IRQs over its local CPUs and applies the
// plan, journalled in stateDir.
func (t *tuner) tune(ctx context.Context, o tuneOptions) (*tuning, error) {
	if o.threads < 0 {
		return nil, failf(ErrInvalid, "threads %d: want 0 (every queue) or more", o.threads)
	}
	if o.irqbalance != "" {
		if err := o.irqbalance.Check(); err != nil {
			return nil, failf(ErrInvalid, "irqbalance %v", err)
		}
	}
	if o.fixOnly {
		// No IRQ is pinned: the fixes are for the CPUs the run named, else
		// those the checks default to (the NIC's local CPUs).
		fixed, err := t.fix(ctx, o, o.fixCPUs)
		if err != nil {
			return nil, err
		}
		t.log.Info("fixed without pinning", "iface", t.iface, "fixed", len(fixed))
		return &tuning{journal: topology.JournalPath(t.stateDir, t.iface), numa: -1, fixed: fixed, fixOnly: true}, nil
	}
	nic, err := topology.Inspect(t.root, t.iface)
	if err != nil {
		return nil, failf(ErrHost, "tune: inspect %s: %v", t.iface, err)
	}
	var exclude cpuset.Set
	for _, c := range o.exclude {
		if c < 0 || c > maxCPU {
			return nil, failf(ErrInvalid, "exclude_cpus: %d is not a CPU, valid CPUs are 0-%d", c, maxCPU)
		}
		exclude = exclude.Union(cpuset.Of(c))
	}
	plan, err := topology.MakePlan(nic, topology.PlanOptions{Threads: o.threads, Exclude: exclude})
	if err != nil {
		if errors.Is(err, topology.ErrTooManyThreads) {
			return nil, failf(ErrInvalid, "threads: %v", err)
		}
		return nil, failf(ErrHost, "tune: plan %s: %v", t.iface, err)
	}
	// The fixes before the IRQs, each journaled before it is written (a
	// ring or channel change may reset a device's IRQs), for the CPUs
	// this plan pins: what they change is in the journal before any IRQ
	// is, and a fix that fails leaves the IRQs alone (the lease's end
	// restores what it wrote). irqbalance is judged first, so a Tune its
	// policy refuses changes nothing.
	if err := t.refuseIRQBalance(o, plan); err != nil {
		return nil, err
	}
	fixed, err := t.fix(ctx, o, planCPUs(plan))
	if err != nil {
		return nil, err
	}
	res, err := topology.Apply(ctx, t.root, plan, topology.ApplyOptions{StateDir: t.stateDir, IRQBalance: o.irqbalance, RootName: t.rootName, Owner: t.owner, Logger: t.log})
	if err != nil {
		if errors.Is(err, topology.ErrIRQBalance) || errors.Is(err, topology.ErrJournalOwner) {
			return nil, failf(ErrHost, "tune: %v", err)
		}
		return nil, failf(ErrFailed, "tune: apply %s: %v", t.iface, err)
	}
	rep := topology.PlanReport(plan)
	cpus, queues, pinned := pinnedQueues(rep)
	t.mu.Lock()
	t.cpus, t.queues, t.pinned = cpus, queues, pinned
	t.mu.Unlock()
	t.log.Info("tuned", "iface", t.iface, "journal", res.Journal, "cpus", cpus)
	return &tuning{
		journal: res.Journal, numa: nic.NUMANode, report: rep, changes: res.Changes,
		warnings: append(plan.Warnings, res.Warnings...), fixed: fixed,
	}, nil
}

// fix applies o's fix classes (none: nothing) for cpus (nil: the checks'
// default CPUs).
func (t *tuner) fix(ctx context.Context, o tuneOptions, cpus []int) ([]doctor.Applied, error) {
	if len(o.fixes) == 0 {
		return nil, nil
	}
	return t.pre.fix(ctx, doctor.Options{Addrs: o.addrs, CPUs: cpus}, o.fixes)
}

// refuseIRQBalance refuses, before any fix is written, a Tune with fixes
// that Apply would refuse for irqbalance (the refuse policy, the default,
// with irqbalance running): Apply's own refusal comes only after the
// fixes.
func (t *tuner) refuseIRQBalance(o tuneOptions, plan *topology.Plan) error {
	if len(o.fixes) == 0 || o.irqbalance == topology.IRQBalanceIgnore {
		return nil
	}
	pids := topology.IRQBalancePIDs(t.root)
	if len(pids) == 0 {
		return nil
	}
	irqs := make([]string, 0, len(plan.Assignments))
	for _, a := range plan.Assignments {
		irqs = append(irqs, "--banirq="+strconv.Itoa(a.IRQ))
	}
	return failf(ErrHost, "tune %s: %w (pid %v) and would move the pinned IRQs back, so no fix was applied and no IRQ pinned: stop it (systemctl stop irqbalance), "+
		"ban the queue IRQs (IRQBALANCE_ARGS=\"%s\") or pass --irqbalance=ignore", t.iface, topology.ErrIRQBalance, pids, strings.Join(irqs, " "))
}

// planCPUs are the CPUs plan pins queues to, each once, in plan order.
func planCPUs(plan *topology.Plan) []int {
	var out []int
	for _, a := range plan.Assignments {
		if !slices.Contains(out, a.CPU) {
			out = append(out, a.CPU)
		}
	}
	return out
}

// pinnedQueues are the CPUs of a plan's pinned (not managed) queues, one
// per queue in queue order, those queues, and how many IRQs are pinned.
func pinnedQueues(rep *topology.Report) (cpus, queues []int, pinned int) {
	seen := map[int]bool{}
	for _, q := range rep.Queues {
		if q.Managed {
			continue
		}
		pinned++
		if seen[q.Queue] {
			continue
		}
		seen[q.Queue] = true
		cpu := -1
		if q.CPU != nil {
			cpu = *q.CPU
		}
		cpus, queues = append(cpus, cpu), append(queues, q.Queue)
	}
	return cpus, queues, pinned
}

// restore puts back the journal of the agent's interface — its IRQ
// affinities and the settings the fixes changed, a journal of settings
// alone too — when it is the agent's own (or has no owner: written before
// journals had one); one of another owner (an operator's `linerate irq
// apply`) is left alone with a warning.
func (t *tuner) restore(ctx context.Context) (restored, error) {
	res, err := topology.Restore(ctx, t.root, topology.RestoreOptions{
		StateDir: t.stateDir, Iface: t.iface, RootName: t.rootName, Owner: t.owner, Logger: t.log, Settings: t.pre.restorers(),
	})
	var out restored
	for _, r := range res {
		out.changes = append(out.changes, r.Changes...)
		out.warnings = append(out.warnings, r.Warnings...)
		out.settings = append(out.settings, r.Settings...)
		for _, s := range r.Settings {
			if s.Status == topology.StatusSkipped {
				out.warnings = append(out.warnings, fmt.Sprintf("setting %s %s not restored: %s", s.Kind, s.Key, s.Note))
			}
		}
		t.log.Info("restored IRQ affinities and settings", "iface", r.Iface, "changes", len(r.Changes), "settings", len(r.Settings))
	}
	t.mu.Lock()
	t.cpus, t.queues, t.pinned = nil, nil, 0
	t.mu.Unlock()
	if err != nil {
		return out, failf(ErrFailed, "restore %s from %s: %w", t.iface, t.stateDir, err)
	}
	return out, nil
}

// restored is what a restore did: the IRQs it put back, the settings
// the fixes had changed (each restored, unchanged or skipped) and its
// warnings.
type restored struct {
	changes  []topology.Change
	settings []topology.SettingChange
	warnings []string
}

// tuned are the CPUs tune pinned queues to and those queues (nil when
// nothing is tuned).
func (t *tuner) tuned() (cpus, queues []int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]int(nil), t.cpus...), append([]int(nil), t.queues...)
}

// pinnedIRQs is how many IRQs tune pinned and restore has not put back.
func (t *tuner) pinnedIRQs() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.pinned
}

// restoreAtStart puts back what a crashed run of this agent left tuned:
// the journal of its interface when it is its own (or has no owner:
// written before journals had one). Every other journal in the state
// directory (another interface's, an operator's `linerate irq apply`,
// another agent's) is left alone and logged.
func (t *tuner) restoreAtStart(ctx context.Context) {
	ifaces, err := topology.ListJournals(t.stateDir)
	if err != nil {
		t.log.Warn("cannot list tuning journals", "state_dir", t.stateDir, "error", err)
		return
	}
	for _, iface := range ifaces {
		path := topology.JournalPath(t.stateDir, iface)
		j, err := topology.LoadJournal(t.stateDir, iface)
		if err != nil {
			t.log.Warn("tuning journal unreadable: left alone", "journal", path, "error", err)
			continue
		}
		if j == nil {
			continue
		}
		if iface != t.iface || (j.Owner != "" && j.Owner != t.owner) {
			t.log.Info("tuning journal not this agent's: left alone (linerate irq restore restores it)", "journal", path, "owner", j.Owner, "agent", t.owner)
			continue
		}
		t.log.Warn("tuning journal of an earlier run of this agent found: restoring it", "journal", path, "owner", j.Owner)
		r, err := t.restore(ctx)
		if err != nil {
			t.log.Error("restoring the earlier run's journal failed; it is kept for `linerate irq restore`", "error", err)
			continue
		}
		t.log.Info("restored the earlier run's IRQ affinities", "iface", iface, "changes", len(r.changes), "warnings", r.warnings)
	}
}
