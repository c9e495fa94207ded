//go:build linux

package xdp

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

const (
	ethSSStats = 1  // ETH_SS_STATS
	gstringLen = 32 // ETH_GSTRING_LEN
)

type ifreqData struct {
	name [unix.IFNAMSIZ]byte
	data unsafe.Pointer
	_    [16]byte
}

// driverInfo is the interface's driver name and its ethtool statistics
// (name → value), read with the SIOCETHTOOL ioctl in the calling thread's
// network namespace.
func driverInfo(iface string) (string, map[string]uint64, error) {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return "", nil, fmt.Errorf("ethtool %s: open socket: %w", iface, err)
	}
	defer unix.Close(fd)
	info, err := unix.IoctlGetEthtoolDrvinfo(fd, iface)
	if err != nil {
		return "", nil, fmt.Errorf("ethtool %s: driver info: %w", iface, err)
	}
	driver := unix.ByteSliceToString(info.Driver[:])
	n := int(info.N_stats)
	if n == 0 {
		return driver, nil, nil
	}
	ioctl := func(buf []byte) error {
		var ifr ifreqData
		copy(ifr.name[:], iface)
		ifr.data = unsafe.Pointer(&buf[0])
		_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.SIOCETHTOOL, uintptr(unsafe.Pointer(&ifr)))
		runtime.KeepAlive(buf)
		if errno != 0 {
			return errno
		}
		return nil
	}
	ne := binary.NativeEndian
	names := make([]byte, 12+n*gstringLen)
	ne.PutUint32(names[0:], unix.ETHTOOL_GSTRINGS)
	ne.PutUint32(names[4:], ethSSStats)
	ne.PutUint32(names[8:], uint32(n))
	if err := ioctl(names); err != nil {
		return driver, nil, fmt.Errorf("ethtool %s: statistics names: %w", iface, err)
	}
	vals := make([]byte, 8+n*8)
	ne.PutUint32(vals[0:], unix.ETHTOOL_GSTATS)
	ne.PutUint32(vals[4:], uint32(n))
	if err := ioctl(vals); err != nil {
		return driver, nil, fmt.Errorf("ethtool %s: statistics: %w", iface, err)
	}
	n = min(n, int(ne.Uint32(names[8:])), int(ne.Uint32(vals[4:])))
	stats := make(map[string]uint64, n)
	for i := range n {
		b := names[12+i*gstringLen:][:gstringLen]
		if j := bytes.IndexByte(b, 0); j >= 0 {
			b = b[:j]
		}
		stats[string(b)] = ne.Uint64(vals[8+i*8:])
	}
	return driver, stats, nil
}
