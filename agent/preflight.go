package agent

import (
	"context"
	"fmt"
	"net/netip"
	"slices"

	"github.com/hashicorp/go-hclog"

	"github.com/linerate/linerate/doctor"
	"github.com/linerate/linerate/internal/enum"
	"github.com/linerate/linerate/topology"
)

// preflight is the host's fitness for the run: its checks (doctor) at
// Describe and the fixes a Tune asks for, journaled in the agent's own
// journal so that every restore path puts them back with the IRQs.
type preflight struct {
	host  doctor.Host
	iface string
	role  Role
	// allow are the fix classes the operator allows (--allow-fixes).
	allow []doctor.FixClass
	// known are the checks whose WARN the operator accepts as known
	// (--known-check): a KNOWN in every report, no warning of a run.
	known []doctor.KnownCheck
	// mgmt are the management addresses the agent listens on (gossip,
	// gRPC): a NOTRACK over one is refused.
	mgmt    func() []netip.Addr
	journal topology.JournalOptions
	log     hclog.Logger
}

// check runs every check for the run o describes (its interface and, when
// o names none, its role are the agent's).
func (p *preflight) check(ctx context.Context, o doctor.Options) (*doctor.Report, error) {
	if p == nil {
		return nil, nil
	}
	o.Iface, o.Known = p.iface, p.known
	if o.Role == "" {
		o.Role = doctor.Role(p.role)
	}
	rep, err := doctor.Run(ctx, p.host, o)
	if err != nil {
		return nil, fmt.Errorf("checks of %s: %w", p.iface, err)
	}
	return rep, nil
}

// fix applies the classes asked for, each allowed by the operator: a class
// that is not is refused by name before anything is written.
func (p *preflight) fix(ctx context.Context, o doctor.Options, classes []doctor.FixClass) ([]doctor.Applied, error) {
	if p == nil {
		return nil, failf(ErrHost, "fix: this agent applies no fixes")
	}
	for _, c := range classes {
		if !slices.Contains(p.allow, c) {
			return nil, failf(ErrHost, "fix %s: not allowed by this agent's --allow-fixes (it allows %s)", c, allowedFixes(p.allow))
		}
	}
	if err := p.refuseMgmtNotrack(o, classes); err != nil {
		return nil, err
	}
	o.Iface = p.iface
	if o.Role == "" {
		o.Role = doctor.Role(p.role)
	}
	fixed, err := doctor.Fix(ctx, p.host, o, doctor.FixOptions{Classes: classes, Journal: p.journal, Logger: p.log})
	if err != nil {
		return fixed, failf(ErrFailed, "tune: %w", err)
	}
	return fixed, nil
}

// refuseMgmtNotrack refuses a NOTRACK fix over one of the agent's own
// management addresses: behind a firewall that accepts by conntrack state
// (ct state established), untracked management traffic could be dropped
// and the agent cut off from its coordinator.
func (p *preflight) refuseMgmtNotrack(o doctor.Options, classes []doctor.FixClass) error {
	if !slices.Contains(classes, doctor.FixNotrack) || p.mgmt == nil {
		return nil
	}
	for _, a := range o.Addrs {
		if slices.Contains(p.mgmt(), a.Unmap().WithZone("")) {
			return failf(ErrHost, "fix %s: address %s is this agent's management address (gossip or gRPC listens on it): "+
				"a NOTRACK rule over it could cut the agent off behind a firewall that accepts by conntrack state; test over a data address", doctor.FixNotrack, a)
		}
	}
	return nil
}

// allowedFixes says the allowed classes, "none" for none.
func allowedFixes(allow []doctor.FixClass) string {
	if len(allow) == 0 {
		return "none"
	}
	return enum.And(allow)
}

// restorers are the restorers of the settings the fixes write that
// topology cannot write itself (ethtool, nftables), for every restore.
func (p *preflight) restorers() map[topology.SettingKind]topology.SettingRestorer {
	if p == nil {
		return nil
	}
	return doctor.Restorers(p.host)
}
