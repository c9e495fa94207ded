package doctor

import (
	"fmt"
	"net/netip"

	"github.com/linerate/linerate/internal/ethtool"
	"github.com/linerate/linerate/pktgen"
	"github.com/linerate/linerate/receiver"
	"github.com/linerate/linerate/topology"
)

// Host is the host the checks read and the fixes write. Every part is an
// interface, so that unit tests give fixtures and fakes and a live host
// gives /, ethtool and nftables.
type Host struct {
	// Root is the host's filesystem: /, a fixture tree, a --root snapshot.
	Root topology.Root
	// RootName is the root as journals record it ("/" for the live host).
	RootName string
	// OpenNIC opens an interface's ethtool parameters; nil when they
	// cannot be read (a snapshot), and the ethtool checks say so.
	OpenNIC func(iface string) (NIC, error)
	// Firewall reads (and for --fix notrack, writes) the ruleset of the
	// host's network namespace; nil when it cannot be read.
	Firewall Firewall
	// Clock reads the kernel's clock discipline (adjtimex, read only); nil
	// when it cannot be read.
	Clock func() (Clock, error)
	// XDPFeatures reads the interface's xdp-features (netdev netlink);
	// nil when they cannot be read.
	XDPFeatures func(iface string) ([]string, error)
	// IfaceAddrs reads the interface's addresses, the run's addresses when
	// Options.Addrs gives none; nil when they cannot be read.
	IfaceAddrs func(iface string) ([]netip.Addr, error)
}

// NIC is one interface's ethtool parameters.
type NIC interface {
	Pause() (ethtool.Pause, error)
	SetPause(ethtool.Pause) error
	Coalesce() (ethtool.Coalesce, error)
	SetCoalesce(ethtool.Coalesce) error
	Rings() (ethtool.Rings, error)
	SetRings(ethtool.Rings) error
	Features() ([]ethtool.Feature, error)
	Link() (ethtool.Link, error)
	Info() (ethtool.DriverInfo, error)
	Close() error
}

// Firewall is the ruleset of the host's network namespace.
type Firewall interface {
	// Inspect reads what the ruleset does to traffic between addrs.
	Inspect(addrs []netip.Addr) (FirewallState, error)
	// AddNotrack adds linerate's NOTRACK table for addrs; the caller
	// journals NotrackSetting first.
	AddNotrack(addrs []netip.Addr) error
	// NotrackSetting is the journal setting AddNotrack will create.
	NotrackSetting() topology.Setting
	// Restorer restores KindNftTable settings.
	Restorer() topology.SettingRestorer
}

// FirewallState is what the ruleset does to the test traffic.
type FirewallState struct {
	// Tracking is the rules that make conntrack track packets (ct
	// expressions, nat chains), each as "table/chain: rule".
	Tracking []string `json:"tracking,omitempty"`
	// Notracked is true when a notrack rule covers every address.
	Notracked bool `json:"notracked"`
	// PathRules are rules at hooks the test traffic passes that can drop,
	// reject or rewrite it.
	PathRules []string `json:"path_rules,omitempty"`
	// Tables are every table, "family name".
	Tables []string `json:"tables,omitempty"`
}

// Clock is the kernel's clock discipline as adjtimex reports it.
type Clock struct {
	Synchronised bool
	EstErrorUs   int64
	MaxErrorUs   int64
	State        int32
	Status       int32
}

// Options say what run the checks are for.
type Options struct {
	Iface     string
	Role      Role
	FrameSize int // bytes, with FCS (RFC 2544); 0: the MTU is checked against nothing larger than 1518
	// CPUs are the CPUs the run will use; nil: every CPU the topology
	// plan gives the interface's queues (the NIC's local CPUs).
	CPUs []int
	// Addrs are the run's test addresses (for conntrack and NOTRACK); nil:
	// the interface's own.
	Addrs []netip.Addr
	// Backend is the run's sender backend, one of pktgen.BackendNames,
	// whose kernel features the sender's side is checked for; "" or
	// "auto": every one a sender can use, and a missing one is evidence,
	// not a warning (auto takes the next).
	Backend pktgen.BackendName
	// Method is the run's receiver method, one of receiver.Methods, whose
	// kernel features the receiver's side is checked for; "" or "auto" as
	// for Backend.
	Method receiver.Method
	// OneClock is true when every delay of the run is timed on one clock
	// (round trips, hosts of one kernel, or latency off): the clock check
	// then passes whatever the synchronisation.
	OneClock bool
	// IRQBalance is the run's irqbalance policy: with "ignore" a running
	// irqbalance is a WARN, not a FAIL.
	IRQBalance topology.IRQBalance
	// Host names the host in the report.
	Host string
	// Known are the checks whose WARN the host's operator accepts as
	// known (the agent's --known-check): such a WARN is a KNOWN, its
	// evidence ending with why. A FAIL stays a FAIL.
	Known []KnownCheck
}

// OptionError is a bad field of Options: Option names it ("role",
// "frame size", "irqbalance", "backend", "method"), Err says the value
// and what would be valid, so a command can name its own flag instead.
type OptionError struct {
	Option string
	Err    error
}

func (e *OptionError) Error() string { return e.Option + " " + e.Err.Error() }
func (e *OptionError) Unwrap() error { return e.Err }

// Check is nil when every field of o is valid; otherwise it is an
// *OptionError naming the first bad field and what would be valid. An
// empty role, irqbalance policy, backend or method is its default.
func (o Options) Check() error {
	bad := func(option string, err error) error { return &OptionError{Option: option, Err: err} }
	if o.Role != "" {
		if err := o.Role.Check(); err != nil {
			return bad("role", err)
		}
	}
	if o.FrameSize != 0 && (o.FrameSize < 64 || o.FrameSize > 65535) {
		return bad("frame size", fmt.Errorf("%d: want 64 to 65535 bytes, or 0 (not checked)", o.FrameSize))
	}
	if o.IRQBalance != "" {
		if err := o.IRQBalance.Check(); err != nil {
			return bad("irqbalance", err)
		}
	}
	if o.Backend != "" {
		if err := o.Backend.Check(); err != nil {
			return bad("backend", err)
		}
	}
	if o.Method != "" {
		if err := o.Method.Check(); err != nil {
			return bad("method", err)
		}
	}
	for _, k := range o.Known {
		if err := k.Check(); err != nil {
			return bad("known check", err)
		}
	}
	return nil
}
