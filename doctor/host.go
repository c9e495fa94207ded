package doctor

import (
	"net/netip"

	"github.com/linerate/linerate/internal/ethtool"
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
	// Backends are the sender backends or receiver methods whose kernel
	// features are checked; nil or "auto": every one the role can use, and
	// a missing one is evidence, not a warning (auto takes the next).
	Backends []string
	// OneClock is true when every delay of the run is timed on one clock
	// (round trips, hosts of one kernel, or latency off): the clock check
	// then passes whatever the synchronisation.
	OneClock bool
	// IRQBalance is the run's irqbalance policy: with "ignore" a running
	// irqbalance is a WARN, not a FAIL.
	IRQBalance topology.IRQBalance
	// Host names the host in the report.
	Host string
}
