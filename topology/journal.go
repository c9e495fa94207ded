package topology

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/linerate/linerate/internal/safefile"
)

// DefaultStateDir is where journals live unless told otherwise.
const DefaultStateDir = "/var/lib/linerate"

const journalVersion = 1

// Journal records the original affinity of every IRQ linerate changed on
// one interface, written before the first change so that a restore works
// after a crash of whatever applied.
type Journal struct {
	Version int    `json:"version"`
	Iface   string `json:"iface"`
	PCI     string `json:"pci,omitempty"`
	Driver  string `json:"driver,omitempty"`
	Root    string `json:"root,omitempty"` // host root the journal applies to ("/" for the live host)
	// Owner is who wrote it: AgentOwner(name, iface) for an agent,
	// OwnerIRQApply for `linerate irq apply`; "" in journals written
	// before journals had one. An agent restores only its own (owner.go).
	Owner   string         `json:"owner,omitempty"`
	Created time.Time      `json:"created"`
	Entries []JournalEntry `json:"entries"`
	// Settings are the host fixes made for the run on this interface
	// (doctor's --fix, a run's --preflight fix), restored with the IRQs.
	Settings []Setting `json:"settings,omitempty"`
}

// JournalEntry is one IRQ's original affinity.
type JournalEntry struct {
	IRQ      int    `json:"irq"`
	Name     string `json:"name"`     // action name when journaled; restore skips the IRQ if it changed
	File     string `json:"file"`     // "smp_affinity_list" or "smp_affinity"
	Original string `json:"original"` // content to write back
	CPU      int    `json:"cpu"`      // CPU linerate pinned it to, -1 before the write
}

// JournalPath is the journal file of iface in stateDir.
func JournalPath(stateDir, iface string) string {
	return filepath.Join(stateDir, "irq-"+iface+".json")
}

// LoadJournal reads a journal; it returns (nil, nil) when there is none.
func LoadJournal(stateDir, iface string) (*Journal, error) {
	return loadJournalFile(JournalPath(stateDir, iface))
}

func loadJournalFile(p string) (*Journal, error) {
	b, err := os.ReadFile(p)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read journal %s: %w", p, err)
	}
	var j Journal
	if err := json.Unmarshal(b, &j); err != nil {
		return nil, fmt.Errorf("read journal %s: %w (move it aside to start afresh)", p, err)
	}
	if j.Version != journalVersion {
		return nil, fmt.Errorf("read journal %s: version %d, this linerate reads version %d", p, j.Version, journalVersion)
	}
	return &j, nil
}

// ListJournals returns the interfaces that have a journal in stateDir.
func ListJournals(stateDir string) ([]string, error) {
	m, err := filepath.Glob(filepath.Join(stateDir, "irq-*.json"))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, p := range m {
		out = append(out, strings.TrimSuffix(strings.TrimPrefix(filepath.Base(p), "irq-"), ".json"))
	}
	sort.Strings(out)
	return out, nil
}

func (j *Journal) entry(irq int) *JournalEntry {
	for i := range j.Entries {
		if j.Entries[i].IRQ == irq {
			return &j.Entries[i]
		}
	}
	return nil
}

// save writes the journal atomically (safefile.WriteFile).
func (j *Journal) save(stateDir string) error {
	if err := os.MkdirAll(stateDir, 0o755); err != nil {
		return fmt.Errorf("create state dir %s: %w", stateDir, err)
	}
	p := JournalPath(stateDir, j.Iface)
	b, err := json.MarshalIndent(j, "", "  ")
	if err != nil {
		return err
	}
	if err := safefile.WriteFile(p, append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("write journal: %w", err)
	}
	return nil
}

func removeJournal(stateDir, iface string) error {
	if err := os.Remove(JournalPath(stateDir, iface)); err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("remove journal: %w", err)
	}
	return nil
}
