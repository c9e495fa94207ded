package nft

import (
	"errors"
	"net/netip"

	"github.com/linerate/linerate/doctor"
	"github.com/linerate/linerate/topology"
)

// Absent is the ruleset of a kernel without nf_tables (a guest whose
// module is not loaded, a minimal kernel): there is no table, so no rule
// can track, drop or rewrite the test traffic, and there is nothing for a
// NOTRACK table to hang on.
type Absent struct {
	// Why says how it is known ("/sys/module/nf_tables: absent").
	Why string
}

var _ doctor.Firewall = Absent{}

// Inspect is an empty ruleset.
func (a Absent) Inspect([]netip.Addr) (doctor.FirewallState, error) {
	return doctor.FirewallState{}, nil
}

// AddNotrack refuses: without nf_tables there is nothing to untrack.
func (a Absent) AddNotrack([]netip.Addr) error {
	return errors.New("nftables is not in this kernel (" + a.Why + "): nothing tracks the test traffic through it")
}

// NotrackSetting is the setting AddNotrack would create.
func (a Absent) NotrackSetting() topology.Setting {
	return topology.Setting{Kind: topology.KindNftTable, Key: NotrackKey}
}

// Restorer finds linerate's table absent, and restores nothing.
func (a Absent) Restorer() topology.SettingRestorer { return absentRestorer{} }

type absentRestorer struct{}

func (absentRestorer) Current(topology.Setting) (string, error) { return "", nil }
func (absentRestorer) Restore(topology.Setting) error           { return nil }
