package doctor

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/go-hclog"

	"github.com/linerate/linerate/internal/enum"
	"github.com/linerate/linerate/topology"
)

// FixClass is one class of fixes an operator allows, one flag each.
type FixClass string

// Fix classes.
const (
	FixFlowControl FixClass = "flow-control" // pause autoneg, rx and tx off
	FixCoalescing  FixClass = "coalescing"   // adaptive off, usecs and frames to the least
	FixRings       FixClass = "rings"        // rx and tx rings to their maximum
	FixGovernor    FixClass = "governor"     // the planned CPUs' governor to performance
	FixNotrack     FixClass = "notrack"      // an nftables NOTRACK table for the run's addresses
	FixRPS         FixClass = "rps"          // RPS off on the test queues
)

// FixClasses lists every class, in the order fixes are applied.
var FixClasses = []FixClass{FixFlowControl, FixCoalescing, FixRings, FixGovernor, FixNotrack, FixRPS}

// Check is nil when c is one of FixClasses.
func (c FixClass) Check() error {
	if slices.Contains(FixClasses, c) {
		return nil
	}
	return fmt.Errorf("%q: valid fix classes are %s", c, enum.And(FixClasses))
}

// ParseFixClasses parses a comma-separated list of classes; "all" is every
// class, "" or "none" none.
func ParseFixClasses(s string) ([]FixClass, error) {
	switch strings.TrimSpace(s) {
	case "", "none":
		return nil, nil
	case "all":
		return slices.Clone(FixClasses), nil
	}
	var out []FixClass
	for _, f := range strings.Split(s, ",") {
		c := FixClass(strings.TrimSpace(f))
		if err := c.Check(); err != nil {
			return nil, err
		}
		if !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out, nil
}

// Applied is one setting a fix changed.
type Applied struct {
	Class   FixClass         `json:"class"`
	Setting topology.Setting `json:"setting"`
	From    string           `json:"from"`
	To      string           `json:"to"`
}

// FixOptions say which fixes to apply and where to journal them.
type FixOptions struct {
	Classes []FixClass
	// Journal names the interface's journal (state dir, root, owner).
	Journal topology.JournalOptions
	Logger  hclog.Logger
}

// fixer applies one class where the host needs it, journaling each
// setting before it writes it.
type fixer func(*env, *journaler) error

var fixers = map[FixClass]fixer{
	FixFlowControl: fixPause,
	FixCoalescing:  fixCoalesce,
	FixRings:       fixRings,
	FixGovernor:    fixGovernor,
	FixNotrack:     fixNotrack,
	FixRPS:         fixRPS,
}

// Fix applies the allowed classes of fixes to h for the run o describes,
// each setting journaled before it is written, and returns what changed.
// It stops at the first failure; what it changed before stays journaled
// (a restore puts it back).
func Fix(ctx context.Context, h Host, o Options, fo FixOptions) ([]Applied, error) {
	if fo.Logger == nil {
		fo.Logger = hclog.NewNullLogger()
	}
	for _, c := range fo.Classes {
		if err := c.Check(); err != nil {
			return nil, fmt.Errorf("doctor fix: %w", err)
		}
	}
	e, err := newEnv(h, o)
	if err != nil {
		return nil, err
	}
	defer e.close()
	fo.Journal.Iface = o.Iface
	if fo.Journal.RootName == "" {
		fo.Journal.RootName = h.RootName
	}
	j := &journaler{o: fo.Journal, log: fo.Logger.Named("doctor")}
	for _, c := range FixClasses {
		if !slices.Contains(fo.Classes, c) {
			continue
		}
		if err := ctx.Err(); err != nil {
			return j.applied, fmt.Errorf("doctor fix %s: %w", o.Iface, err)
		}
		j.class = c
		if err := fixers[c](e, j); err != nil {
			return j.applied, fmt.Errorf("doctor fix %s on %s: %w", c, o.Iface, err)
		}
	}
	return j.applied, nil
}

// journaler journals settings before a fixer writes them.
type journaler struct {
	o       topology.JournalOptions
	log     hclog.Logger
	class   FixClass
	applied []Applied
}

// change journals s (its Original read by the caller), calls write, then
// records what read returns as applied.
func (j *journaler) change(s topology.Setting, write func() error, read func() (string, error)) error {
	s.Class = string(j.class)
	if err := topology.JournalSetting(j.o, s); err != nil {
		return err
	}
	if err := write(); err != nil {
		return fmt.Errorf("write %s %s: %w (journaled; linerate doctor --restore puts back what was written)", s.Kind, s.Key, err)
	}
	now, err := read()
	if err != nil {
		return fmt.Errorf("read back %s %s: %w", s.Kind, s.Key, err)
	}
	if err := topology.SettingApplied(j.o, s.Kind, s.Key, now); err != nil {
		return err
	}
	j.log.Info("fixed", "class", j.class, "kind", s.Kind, "key", s.Key, "from", s.Original, "to", now)
	j.applied = append(j.applied, Applied{Class: j.class, Setting: s, From: s.Original, To: now})
	return nil
}

// file changes a sysfs or procfs attribute to value (unless it already
// reads so).
func (j *journaler) file(e *env, name, value string) error {
	cur, err := e.read(name)
	if err != nil {
		return fmt.Errorf("read %s: %w", name, err)
	}
	if cur == value {
		return nil
	}
	return j.change(topology.Setting{Kind: topology.KindFile, Key: name, Original: cur},
		func() error { return e.h.Root.WriteFile(name, []byte(value+"\n")) },
		func() (string, error) { return e.read(name) })
}

// Restorers are the restorers of every setting kind a fix writes, other
// than topology.KindFile: ethtool parameters through h.OpenNIC, the
// NOTRACK table through h.Firewall. A kind the host cannot restore is
// missing, and topology.Restore keeps a journal that holds it.
func Restorers(h Host) map[topology.SettingKind]topology.SettingRestorer {
	out := map[topology.SettingKind]topology.SettingRestorer{}
	if h.OpenNIC != nil {
		for _, k := range []topology.SettingKind{topology.KindEthtoolPause, topology.KindEthtoolCoalesce, topology.KindEthtoolRings} {
			out[k] = ethtoolRestorer{open: h.OpenNIC, kind: k}
		}
	}
	if h.Firewall != nil {
		out[topology.KindNftTable] = h.Firewall.Restorer()
	}
	return out
}
