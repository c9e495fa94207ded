//go:build linux

package ethtool

import (
	"errors"
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Reader reads one interface's driver information and statistics
// through an ioctl socket opened in the calling thread's network
// namespace, so that reading later works from any thread. It keeps the
// statistics' names between reads; it is not safe for concurrent use.
type Reader struct {
	name  string
	fd    int
	names []string // ETHTOOL_GSTRINGS of ETH_SS_STATS, read once
}

// ethSSStats is ETH_SS_STATS: the string set naming ETHTOOL_GSTATS' values.
const ethSSStats = 1

// Open opens a reader of iface in the calling thread's network namespace.
// The interface is not looked up until the first read.
func Open(iface string) (*Reader, error) {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open a socket for ethtool ioctls on %s: %w", iface, err)
	}
	return &Reader{name: iface, fd: fd}, nil
}

// Close releases the reader's socket.
func (r *Reader) Close() error {
	if r.fd < 0 {
		return nil
	}
	err := unix.Close(r.fd)
	r.fd = -1
	return err
}

// Driver is the interface's driver name (ETHTOOL_GDRVINFO).
func (r *Reader) Driver() (string, error) {
	info, err := r.Info()
	return info.Driver, err
}

// Info is the interface's driver name and firmware version
// (ETHTOOL_GDRVINFO).
func (r *Reader) Info() (DriverInfo, error) {
	info, err := unix.IoctlGetEthtoolDrvinfo(r.fd, r.name)
	if err != nil {
		return DriverInfo{}, fmt.Errorf("ethtool driver info of %s: %w", r.name, mapErrno(err))
	}
	return DriverInfo{Driver: unix.ByteSliceToString(info.Driver[:]), Firmware: unix.ByteSliceToString(info.Fw_version[:]), BusInfo: unix.ByteSliceToString(info.Bus_info[:])}, nil
}

// Stats returns the driver's statistics, name → value (nil when the
// driver has none): the names with ETHTOOL_GSTRINGS (on the first call,
// and again when their number changes), the values with ETHTOOL_GSTATS.
func (r *Reader) Stats() (map[string]uint64, error) {
	info, err := unix.IoctlGetEthtoolDrvinfo(r.fd, r.name)
	if err != nil {
		return nil, fmt.Errorf("ethtool driver info of %s: %w", r.name, mapErrno(err))
	}
	n := int(info.N_stats)
	if n == 0 {
		return nil, nil
	}
	if len(r.names) != n {
		names, err := r.strings(ethSSStats, n)
		if err != nil {
			return nil, fmt.Errorf("ethtool statistics names of %s: %w", r.name, err)
		}
		r.names = names
	}
	// struct ethtool_stats { u32 cmd, n_stats; u64 data[n_stats] }
	buf := make([]uint64, 1+n)
	hdr := (*[2]uint32)(unsafe.Pointer(&buf[0]))
	hdr[0], hdr[1] = unix.ETHTOOL_GSTATS, uint32(n)
	if err := r.ioctl(unsafe.Pointer(&buf[0])); err != nil {
		return nil, fmt.Errorf("ethtool statistics of %s: %w", r.name, err)
	}
	if int(hdr[1]) != n {
		r.names = nil // changed under us (queues reconfigured): names again next time
		return nil, fmt.Errorf("ethtool statistics of %s: %d values for %d names", r.name, hdr[1], n)
	}
	return foldStats(r.names, buf[1:]), nil
}

// ifreqData is struct ifreq with ifr_data: what SIOCETHTOOL takes.
type ifreqData struct {
	name [unix.IFNAMSIZ]byte
	data unsafe.Pointer
	_    [24 - unsafe.Sizeof(uintptr(0))]byte
}

func (r *Reader) ioctl(buf unsafe.Pointer) error {
	var ifr ifreqData
	copy(ifr.name[:], r.name)
	ifr.data = buf
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(r.fd), unix.SIOCETHTOOL, uintptr(unsafe.Pointer(&ifr)))
	if errno != 0 {
		return mapErrno(errno)
	}
	return nil
}

// errnoError is a kernel error that also matches a sentinel: errors.Is
// holds for both.
type errnoError struct {
	errno    unix.Errno
	sentinel error
}

func (e *errnoError) Error() string        { return e.errno.Error() }
func (e *errnoError) Unwrap() error        { return e.errno }
func (e *errnoError) Is(target error) bool { return target == e.sentinel }

// mapErrno gives EOPNOTSUPP and ENODEV their sentinels.
func mapErrno(err error) error {
	var errno unix.Errno
	if !errors.As(err, &errno) {
		return err
	}
	switch errno {
	case unix.EOPNOTSUPP:
		return &errnoError{errno, ErrNotSupported}
	case unix.ENODEV:
		return &errnoError{errno, ErrNoInterface}
	}
	return err
}
