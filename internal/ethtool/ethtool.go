// Package ethtool reads a network interface's driver name and driver
// statistics (what `ethtool -i` and `ethtool -S` show) with the
// SIOCETHTOOL ioctl: ETHTOOL_GDRVINFO, then ETHTOOL_GSTRINGS of
// ETH_SS_STATS for the names and ETHTOOL_GSTATS for the values. It is
// the one such reader: pktgen/xdp reads the driver's xdp_xmit counters
// with it, receiver its XDP packet and drop counters.
//
// Why not a library: the ethtool netlink family (mdlayher/ethtool) has
// no driver-specific statistics. github.com/safchain/ethtool (v0.7.0,
// needing only x/sys) has them, but it is a whole ethtool (1,300 lines of
// features, rings, EEPROM, link modes) for the two calls used here, and
// its statistics call hands the kernel a pointer carried in a uintptr
// field (against unsafe.Pointer's rules), sizes its buffers for 32,768
// statistics (1.25 MiB, pooled), reads the names again on every call,
// and does not notice when the number of statistics changes between the
// names and the values (a driver reconfiguring its queues), which this
// package reports as an error and answers by reading the names again on
// the next call. Same-named statistics are summed here; there the last wins.
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
type DriverInfo struct{ Driver, Firmware string }

// Name is the interface the reader reads.
func (r *Reader) Name() string { return r.name }
