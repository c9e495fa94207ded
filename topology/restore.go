package topology

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/hashicorp/go-hclog"
)

// RestoreResult reports the restore of one interface's journal.
type RestoreResult struct {
	Iface   string   `json:"iface"`
	Journal string   `json:"journal"`
	Owner   string   `json:"owner,omitempty"` // who wrote the journal
	Changes []Change `json:"changes"`
	// Settings are the journal's host fixes put back (KindFile by
	// topology, other kinds by RestoreOptions.Settings).
	Settings []SettingChange `json:"settings,omitempty"`
	Warnings []string        `json:"warnings"`
}

// RestoreOptions configure Restore.
type RestoreOptions struct {
	StateDir string // journal directory; DefaultStateDir when empty
	Iface    string // only this interface's journal; all when empty
	// RootName is the host root being restored ("/" for the live host). A
	// journal written for another root is refused, so that a journal made
	// against a fixture never writes to the live host's IRQs.
	RootName string
	// Owner, when set, restores only the journals that owner wrote (and
	// those without an owner, written before journals had one); another
	// owner's journal is left alone, reported in its result's Warnings.
	// Empty: every journal (an operator's `linerate irq restore`).
	Owner string
	// Settings restore the journaled settings of kinds other than
	// KindFile; a journal holding a kind without one is kept, with an error.
	Settings map[SettingKind]SettingRestorer
	Logger   hclog.Logger
}

// Restore puts back every affinity recorded in the journals of the state
// dir. It is idempotent: an IRQ that vanished or whose action name changed
// is skipped with a note, a journal is removed once restored, and a second
// restore finds nothing to do. A journal whose restore failed is kept so
// that it can be retried.
func Restore(ctx context.Context, r Root, opts RestoreOptions) ([]RestoreResult, error) {
	stateDir, iface, log := opts.StateDir, opts.Iface, opts.Logger
	if stateDir == "" {
		stateDir = DefaultStateDir
	}
	if log == nil {
		log = hclog.NewNullLogger()
	}
	ifaces := []string{iface}
	if iface == "" {
		var err error
		if ifaces, err = ListJournals(stateDir); err != nil {
			return nil, fmt.Errorf("restore: list journals in %s: %w", stateDir, err)
		}
	}
	out := []RestoreResult{}
	var errs []error
	for _, name := range ifaces {
		if err := ctx.Err(); err != nil {
			return out, err
		}
		j, err := LoadJournal(stateDir, name)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if j == nil {
			continue
		}
		if !j.ownedBy(opts.Owner) {
			note := fmt.Sprintf("journal %s was written by %s, not %q: left alone (linerate irq restore --iface %s restores it)",
				JournalPath(stateDir, name), j.ownerName(), opts.Owner, name)
			log.Named("topology").Info("journal of another owner left alone", "iface", name, "owner", j.Owner)
			out = append(out, RestoreResult{Iface: name, Journal: JournalPath(stateDir, name), Owner: j.Owner, Changes: []Change{}, Warnings: []string{note}})
			continue
		}
		if j.Root != "" && opts.RootName != "" && filepath.Clean(j.Root) != filepath.Clean(opts.RootName) {
			errs = append(errs, fmt.Errorf("restore %s: journal %s was written for host root %s, not %s: pass --root %s (journal kept)",
				name, JournalPath(stateDir, name), j.Root, opts.RootName, j.Root))
			continue
		}
		res, err := restoreJournal(r, j)
		settings, serr := restoreSettings(r, j.Settings, opts.Settings)
		res.Settings, err = settings, errors.Join(err, serr)
		res.Journal, res.Owner = JournalPath(stateDir, name), j.Owner
		if err == nil {
			err = removeJournal(stateDir, name)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("restore %s: %w (journal %s kept)", name, err, res.Journal))
		}
		log.Named("topology").Info("restored", "iface", name, "irqs", len(res.Changes), "settings", len(res.Settings))
		out = append(out, res)
	}
	return out, errors.Join(errs...)
}

func restoreJournal(r Root, j *Journal) (RestoreResult, error) {
	res := RestoreResult{Iface: j.Iface, Changes: []Change{}, Warnings: []string{}}
	namer := &irqNamer{r: r}
	var errs []error
	for i := len(j.Entries) - 1; i >= 0; i-- {
		e := j.Entries[i]
		ch := Change{IRQ: e.IRQ, Name: e.Name, Queue: -1, To: e.Original}
		f := fmt.Sprintf("/proc/irq/%d/%s", e.IRQ, e.File)
		cur, err := readString(r, f)
		if isNotExist(err) {
			ch.Status, ch.Note = StatusSkipped, "irq vanished (interface reconfigured or driver reloaded)"
			res.Changes = append(res.Changes, ch)
			continue
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("read %s: %w", f, err))
			continue
		}
		ch.From = cur
		names, err := namer.names(e.IRQ)
		if err != nil {
			errs = append(errs, fmt.Errorf("name irq %d: %w", e.IRQ, err))
			continue
		}
		if e.Name != "" && !slices.Contains(names, e.Name) {
			ch.Status = StatusSkipped
			ch.Note = fmt.Sprintf("irq %d now belongs to %v, not %s: left alone", e.IRQ, names, e.Name)
			res.Changes = append(res.Changes, ch)
			continue
		}
		if want, err := parseAffinity(e.File, e.Original); err == nil {
			if got, err := parseAffinity(e.File, cur); err == nil && got.Equal(want) {
				ch.Status = StatusUnchanged
				res.Changes = append(res.Changes, ch)
				continue
			}
		}
		if err := r.WriteFile(f, []byte(e.Original+"\n")); err != nil {
			switch classify(err) {
			case classManaged:
				ch.Status, ch.Note = StatusManaged, fmt.Sprintf("kernel refused (%v): the irq became kernel-managed", err)
				res.Changes = append(res.Changes, ch)
				continue
			case classVanished:
				ch.Status, ch.Note = StatusSkipped, "irq vanished"
				res.Changes = append(res.Changes, ch)
				continue
			case classNoPerm:
				errs = append(errs, fmt.Errorf("restore irq %d (%s) to %s: %w: %w", e.IRQ, e.Name, e.Original, err, ErrNoPermission))
			default:
				errs = append(errs, fmt.Errorf("restore irq %d (%s) to %s: %w", e.IRQ, e.Name, e.Original, err))
			}
			continue
		}
		ch.Status = StatusRestored
		if back, err := readString(r, f); err == nil {
			ch.ReadBack = back
		}
		res.Changes = append(res.Changes, ch)
	}
	slices.Reverse(res.Changes)
	return res, errors.Join(errs...)
}
