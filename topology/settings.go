package topology

import (
	"errors"
	"fmt"
	"slices"
	"time"
)

// SettingKind says how a journaled setting is read and written back.
type SettingKind string

// Setting kinds. KindFile is restored by topology itself through the Root;
// every other kind needs a SettingRestorer (RestoreOptions.Settings).
const (
	// KindFile is a sysfs or procfs attribute: Key is its absolute host path,
	// Original its content (trimmed) before the fix.
	KindFile SettingKind = "file"
	// KindEthtoolPause, KindEthtoolCoalesce and KindEthtoolRings are an
	// interface's ethtool parameters: Key is the interface, Original the
	// JSON of the parameters before the fix.
	KindEthtoolPause    SettingKind = "ethtool-pause"
	KindEthtoolCoalesce SettingKind = "ethtool-coalesce"
	KindEthtoolRings    SettingKind = "ethtool-rings"
	// KindNftTable is an nftables table linerate created: Key is
	// "family name", Original is empty (the table did not exist).
	KindNftTable SettingKind = "nft-table"
)

// Setting is one host setting a fix changed (a governor, an interface's
// pause parameters, a NOTRACK table), journaled before it is written so
// that every restore path puts it back, as it does IRQ affinities.
type Setting struct {
	Kind SettingKind `json:"kind"`
	Key  string      `json:"key"`
	// Original is the value before linerate's first change.
	Original string `json:"original"`
	// Applied is the value read back after the fix; "" until it is written.
	// A restore finding neither Applied nor Original leaves the setting
	// alone: someone else changed it since.
	Applied string `json:"applied,omitempty"`
	// Class is the fix class that made the change ("governor", "rps", ...).
	Class string `json:"class,omitempty"`
}

func (s Setting) same(o Setting) bool { return s.Kind == o.Kind && s.Key == o.Key }

// SettingRestorer reads and writes back settings of one kind other than
// KindFile.
type SettingRestorer interface {
	// Current reads the setting now, in the form Setting.Original has.
	Current(s Setting) (string, error)
	// Restore writes s.Original back.
	Restore(s Setting) error
}

// SettingChange is what a restore did to one setting.
type SettingChange struct {
	Kind     SettingKind `json:"kind"`
	Key      string      `json:"key"`
	From     string      `json:"from"`
	To       string      `json:"to"`
	Status   string      `json:"status"` // StatusRestored, StatusUnchanged, StatusSkipped
	Note     string      `json:"note,omitempty"`
	ReadBack string      `json:"read_back,omitempty"`
}

// JournalOptions name the journal a setting is recorded in: the same
// journal, owner and root as the interface's IRQ affinities.
type JournalOptions struct {
	StateDir string // DefaultStateDir when empty
	Iface    string
	RootName string
	Owner    string
}

// JournalSetting records s (with its Original) in the interface's journal
// before the caller writes the new value. A setting already journaled
// keeps its first Original: restore goes back to before linerate. A
// journal of another owner is refused (ErrJournalOwner).
func JournalSetting(o JournalOptions, s Setting) error {
	return updateJournal(o, func(j *Journal) {
		for _, e := range j.Settings {
			if e.same(s) {
				return
			}
		}
		s.Applied = ""
		j.Settings = append(j.Settings, s)
	})
}

// SettingApplied records what a journaled setting reads back after the
// fix wrote it.
func SettingApplied(o JournalOptions, kind SettingKind, key, applied string) error {
	return updateJournal(o, func(j *Journal) {
		for i := range j.Settings {
			if j.Settings[i].Kind == kind && j.Settings[i].Key == key {
				j.Settings[i].Applied = applied
			}
		}
	})
}

// JournaledSettings are the settings in the interface's journal (nil
// when there is none).
func JournaledSettings(stateDir, iface string) ([]Setting, error) {
	if stateDir == "" {
		stateDir = DefaultStateDir
	}
	j, err := LoadJournal(stateDir, iface)
	if err != nil || j == nil {
		return nil, err
	}
	return j.Settings, nil
}

func updateJournal(o JournalOptions, edit func(*Journal)) error {
	if o.StateDir == "" {
		o.StateDir = DefaultStateDir
	}
	j, err := LoadJournal(o.StateDir, o.Iface)
	if err != nil {
		return fmt.Errorf("journal setting on %s: %w", o.Iface, err)
	}
	if j != nil && !j.ownedBy(o.Owner) {
		return fmt.Errorf("journal setting on %s: journal %s was written by %s, not %q: %w (restore it first: linerate doctor --restore --iface %s)",
			o.Iface, JournalPath(o.StateDir, o.Iface), j.ownerName(), o.Owner, ErrJournalOwner, o.Iface)
	}
	if j == nil {
		j = &Journal{Version: journalVersion, Iface: o.Iface, Root: o.RootName, Owner: o.Owner, Created: time.Now().UTC(), Entries: []JournalEntry{}}
	}
	j.Owner = o.Owner
	edit(j)
	if err := j.save(o.StateDir); err != nil {
		return fmt.Errorf("journal setting on %s: %w", o.Iface, err)
	}
	return nil
}

// restoreSettings puts back a journal's settings, last first.
func restoreSettings(r Root, settings []Setting, restorers map[SettingKind]SettingRestorer) ([]SettingChange, error) {
	var out []SettingChange
	var errs []error
	for i := len(settings) - 1; i >= 0; i-- {
		s := settings[i]
		ch := SettingChange{Kind: s.Kind, Key: s.Key, To: s.Original}
		current, write := fileSetting(r), func() error { return r.WriteFile(s.Key, []byte(s.Original+"\n")) }
		if s.Kind != KindFile {
			rs := restorers[s.Kind]
			if rs == nil {
				errs = append(errs, fmt.Errorf("restore %s %s: this process cannot restore %s settings (linerate doctor --restore can)", s.Kind, s.Key, s.Kind))
				continue
			}
			current, write = rs.Current, func() error { return rs.Restore(s) }
		}
		cur, err := current(s)
		if err != nil {
			if isNotExist(err) {
				ch.Status, ch.Note = StatusSkipped, "vanished (device removed or reconfigured)"
				out = append(out, ch)
				continue
			}
			errs = append(errs, fmt.Errorf("restore %s %s: read: %w", s.Kind, s.Key, err))
			continue
		}
		ch.From = cur
		switch {
		case cur == s.Original:
			ch.Status = StatusUnchanged
			out = append(out, ch)
			continue
		case s.Applied != "" && cur != s.Applied:
			ch.Status = StatusSkipped
			ch.Note = fmt.Sprintf("now %q, neither linerate's %q nor the original: changed by someone else since, left alone", cur, s.Applied)
			out = append(out, ch)
			continue
		}
		if err := write(); err != nil {
			errs = append(errs, fmt.Errorf("restore %s %s to %q: %w", s.Kind, s.Key, s.Original, err))
			continue
		}
		ch.Status = StatusRestored
		if back, err := current(s); err == nil {
			ch.ReadBack = back
		}
		out = append(out, ch)
	}
	slices.Reverse(out)
	return out, errors.Join(errs...)
}

func fileSetting(r Root) func(Setting) (string, error) {
	return func(s Setting) (string, error) { return readString(r, s.Key) }
}
