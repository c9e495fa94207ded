// Package ethtool reads a network interface's driver name and driver
// statistics (what `ethtool -i` and `ethtool -S` show) and reads and
// writes the parameters a benchmark depends on, with the SIOCETHTOOL
// ioctl: flow control (ETHTOOL_G/SPAUSEPARAM, `ethtool -a/-A`),
// interrupt coalescing (ETHTOOL_G/SCOALESCE, every field of struct
// ethtool_coalesce, `-c/-C`), ring sizes (ETHTOOL_G/SRINGPARAM, `-g/-G`),
// offloads (ETHTOOL_GSSET_INFO and ETHTOOL_GSTRINGS of ETH_SS_FEATURES,
// ETHTOOL_GFEATURES, `-k`) and the link (ETHTOOL_GLINKSETTINGS, else
// ETHTOOL_GSET). It is the one such reader: pktgen/xdp reads the driver's
// xdp_xmit counters with it, receiver its XDP packet and drop counters,
// doctor the parameters it checks, fixes and restores.
//
// Why not a library: the ethtool netlink family as mdlayher/ethtool
// (v0.7.0) offers it has link info, link modes, link state, FEC,
// wake-on-LAN and private flags, but no pause, coalescing, rings or
// features (the netlink messages exist in the kernel; the library does
// not speak them), and no driver-specific statistics, so doctor would
// still need this ioctl for most of what it reads, and a second way of
// talking to the driver (mdlayher's genetlink, netlink and socket, with
// x/net and x/sync) for the rest. The ioctls are what the `ethtool` tool
// itself used until its 5.6; the kernel serves them from the same driver
// callbacks as netlink (the tests read and write them on the host's 6.18
// veth and the guests' 6.1 virtio_net), and a write of them keeps what
// only netlink sets (CQE mode, TX push) as it was. github.com/safchain/ethtool (v0.7.0,
// needing only x/sys) has the statistics, but it is a whole ethtool
// (1,300 lines of features, rings, EEPROM, link modes) for the few calls
// used here, and its statistics call hands the kernel a pointer carried
// in a uintptr field (against unsafe.Pointer's rules), sizes its buffers
// for 32,768 statistics (1.25 MiB, pooled), reads the names again on
// every call, and does not notice when the number of statistics changes
// between the names and the values (a driver reconfiguring its queues),
// which this package reports as an error and answers by reading the
// names again on the next call. Same-named statistics are summed here;
// there the last wins.
//
// Errors from the kernel keep their errno (errors.Is(err, unix.EOPNOTSUPP)
// holds) and match a sentinel too: ErrNotSupported for a driver without
// the operation, ErrNoInterface for a name the namespace does not have.
// The package builds everywhere; off Linux, Open returns ErrNotSupported.
package ethtool

import "errors"

// Sentinel errors callers branch on.
var (
	// ErrNotSupported is returned when the driver (or the OS) does not offer
	// the operation (EOPNOTSUPP): loopback has no driver information, and many
	// virtual devices no statistics.
	ErrNotSupported = errors.New("ethtool operation not supported")
	// ErrNoInterface is returned when there is no interface of that name in
	// the reader's network namespace (ENODEV).
	ErrNoInterface = errors.New("no such interface")
)

// DriverInfo is what ETHTOOL_GDRVINFO tells of an interface (the
// driver and firmware-version lines of `ethtool -i`).
type DriverInfo struct {
	Driver, Firmware string
	// BusInfo is the device's bus address ("0000:03:00.0" on PCI), empty
	// for a software device (veth, tun, a bridge).
	BusInfo string
}

// Name is the interface the reader reads.
func (r *Reader) Name() string { return r.name }
