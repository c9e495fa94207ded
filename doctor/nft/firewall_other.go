//go:build !linux

package nft

import (
	"errors"
	"fmt"
	"net/netip"
	"runtime"

	"github.com/linerate/linerate/doctor"
	"github.com/linerate/linerate/topology"
)

// TableName is linerate's NOTRACK table, in family inet.
const TableName = "linerate"

// NotrackKey is the NOTRACK table's journal key ("family name").
const NotrackKey = "inet " + TableName

// ErrTableExists is returned when linerate's table is already there.
var ErrTableExists = errors.New("nftables table inet linerate already exists")

var errOS = fmt.Errorf("nftables: not on %s (Linux only)", runtime.GOOS)

// Firewall is the nftables ruleset; only Linux has one.
type Firewall struct{}

var _ doctor.Firewall = (*Firewall)(nil)

// Open fails: nftables is Linux's.
func Open(iface string) (*Firewall, error) { return nil, errOS }

// Close does nothing.
func (f *Firewall) Close() error { return nil }

// Inspect fails: nftables is Linux's.
func (f *Firewall) Inspect([]netip.Addr) (doctor.FirewallState, error) {
	return doctor.FirewallState{}, errOS
}

// AddNotrack fails: nftables is Linux's.
func (f *Firewall) AddNotrack([]netip.Addr) error { return errOS }

// NotrackSetting is the journal setting AddNotrack would create.
func (f *Firewall) NotrackSetting() topology.Setting {
	return topology.Setting{Kind: topology.KindNftTable, Key: NotrackKey}
}

// Restorer fails every read and write.
func (f *Firewall) Restorer() topology.SettingRestorer { return restorer{} }

type restorer struct{}

func (restorer) Current(topology.Setting) (string, error) { return "", errOS }
func (restorer) Restore(topology.Setting) error           { return errOS }
