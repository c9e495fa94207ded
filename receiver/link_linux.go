//go:build linux

package receiver

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"unsafe"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// linkStats reads an interface's counters through a netlink socket and
// an ethtool ioctl socket opened in the interface's namespace, so that
// reading them later works from any thread.
type linkStats struct {
	name   string
	index  int
	driver string
	h      *netlink.Handle
	fd     int      // AF_INET socket for SIOCETHTOOL; -1 without
	names  []string // ETHTOOL_GSTRINGS of ETH_SS_STATS
}

// openLinkStats must run in the interface's network namespace.
func openLinkStats(name string) (*linkStats, error) {
	h, err := netlink.NewHandle(unix.NETLINK_ROUTE)
	if err != nil {
		return nil, fmt.Errorf("open netlink to read %s's counters: %w", name, err)
	}
	l, err := h.LinkByName(name)
	if err != nil {
		h.Close()
		var nf netlink.LinkNotFoundError
		if errors.As(err, &nf) || errors.Is(err, unix.ENODEV) {
			return nil, fmt.Errorf("interface %s: %w", name, ErrNoInterface)
		}
		return nil, fmt.Errorf("look up interface %s: %w", name, err)
	}
	s := &linkStats{name: name, index: l.Attrs().Index, h: h, fd: -1}
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		s.close()
		return nil, fmt.Errorf("open a socket for ethtool ioctls on %s: %w", name, err)
	}
	s.fd = fd
	if info, err := unix.IoctlGetEthtoolDrvinfo(fd, name); err == nil {
		s.driver = unix.ByteSliceToString(info.Driver[:])
	}
	return s, nil
}

func (s *linkStats) close() {
	if s.h != nil {
		s.h.Close()
		s.h = nil
	}
	if s.fd >= 0 {
		unix.Close(s.fd)
		s.fd = -1
	}
}

// read returns the counters now. Driver statistics the driver does not
// offer (EOPNOTSUPP) read as 0.
func (s *linkStats) read() (LinkCounters, error) {
	var c LinkCounters
	l, err := s.h.LinkByIndex(s.index)
	if err != nil {
		return c, fmt.Errorf("read counters of %s (ifindex %d): %w", s.name, s.index, err)
	}
	if st := l.Attrs().Statistics; st != nil {
		c.RxPackets, c.RxDropped, c.RxMissed, c.RxFifo = st.RxPackets, st.RxDropped, st.RxMissedErrors, st.RxFifoErrors
	}
	stats, err := s.ethtoolStats()
	if err != nil {
		if errors.Is(err, unix.EOPNOTSUPP) {
			return c, nil
		}
		return c, err
	}
	c.XDPPackets, c.XDPDrops = sumXDPStats(stats)
	return c, nil
}

// ETH_SS_STATS: the string set of ETHTOOL_GSTATS names.
const (
	ethSSStats    = 1
	ethGStringLen = 32 // ETH_GSTRING_LEN
)

// ifreqData is struct ifreq with ifr_data: what SIOCETHTOOL takes.
type ifreqData struct {
	name [unix.IFNAMSIZ]byte
	data unsafe.Pointer
	_    [24 - unsafe.Sizeof(uintptr(0))]byte
}

func (s *linkStats) ethtool(buf unsafe.Pointer) error {
	var ifr ifreqData
	copy(ifr.name[:], s.name)
	ifr.data = buf
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(s.fd), unix.SIOCETHTOOL, uintptr(unsafe.Pointer(&ifr)))
	if errno != 0 {
		return errno
	}
	return nil
}

// ethtoolStats reads the driver's statistics (ethtool -S): the names with
// ETHTOOL_GSTRINGS (once, and again when their number changes), the
// values with ETHTOOL_GSTATS.
func (s *linkStats) ethtoolStats() (map[string]uint64, error) {
	info, err := unix.IoctlGetEthtoolDrvinfo(s.fd, s.name)
	if err != nil {
		return nil, fmt.Errorf("ethtool driver info of %s: %w", s.name, err)
	}
	n := int(info.N_stats)
	if n == 0 {
		return nil, nil
	}
	if len(s.names) != n {
		// struct ethtool_gstrings { u32 cmd, string_set, len; u8 data[len*32] }
		buf := make([]uint32, 3+n*ethGStringLen/4)
		buf[0], buf[1], buf[2] = unix.ETHTOOL_GSTRINGS, ethSSStats, uint32(n)
		if err := s.ethtool(unsafe.Pointer(&buf[0])); err != nil {
			return nil, fmt.Errorf("ethtool statistics names of %s: %w", s.name, err)
		}
		raw := unsafe.Slice((*byte)(unsafe.Pointer(&buf[3])), n*ethGStringLen)
		s.names = make([]string, n)
		for i := range s.names {
			b := raw[i*ethGStringLen : (i+1)*ethGStringLen]
			if j := bytes.IndexByte(b, 0); j >= 0 {
				b = b[:j]
			}
			s.names[i] = string(b)
		}
	}
	// struct ethtool_stats { u32 cmd, n_stats; u64 data[n_stats] }
	buf := make([]uint64, 1+n)
	hdr := (*[2]uint32)(unsafe.Pointer(&buf[0]))
	hdr[0], hdr[1] = unix.ETHTOOL_GSTATS, uint32(n)
	if err := s.ethtool(unsafe.Pointer(&buf[0])); err != nil {
		return nil, fmt.Errorf("ethtool statistics of %s: %w", s.name, err)
	}
	if int(hdr[1]) != n {
		s.names = nil // changed under us (queues reconfigured): names again next time
		return nil, fmt.Errorf("ethtool statistics of %s: %d values for %d names", s.name, hdr[1], n)
	}
	out := make(map[string]uint64, n)
	for i, name := range s.names {
		out[name] += buf[1+i]
	}
	return out, nil
}

// sumXDPStats sums the driver's XDP counters:
//
//   - xdp_packets: names ending in "xdp_packets" — frames run through an
//     XDP program (veth and virtio_net: rx_queue_N_xdp_packets). Drivers
//     that count every frame in rx_packets (mlx5, i40e, ice, ...) have none.
//   - xdp_drops: names ending in "xdp_drops" or "xdp_drop" — XDP_DROP
//     verdicts (veth and virtio_net rx_queue_N_xdp_drops, mlx5
//     rx_xdp_drop, ena xdp_drop).
//
// Transmit-side names (starting with "tx") are left out. When a driver
// has both totals and per-queue or per-channel counters (mlx5's rx_xdp_drop
// and rx0_xdp_drop), only the totals (names without digits) are summed, so
// nothing counts twice.
func sumXDPStats(stats map[string]uint64) (packets, drops uint64) {
	sum := func(match func(string) bool) uint64 {
		var total, perQueue uint64
		var haveTotal bool
		for name, v := range stats {
			n := strings.ToLower(name)
			if strings.HasPrefix(n, "tx") || !match(n) {
				continue
			}
			if strings.ContainsAny(n, "0123456789") {
				perQueue += v
			} else {
				total += v
				haveTotal = true
			}
		}
		if haveTotal {
			return total
		}
		return perQueue
	}
	packets = sum(func(n string) bool { return strings.HasSuffix(n, "xdp_packets") })
	drops = sum(func(n string) bool { return strings.HasSuffix(n, "xdp_drops") || strings.HasSuffix(n, "xdp_drop") })
	return packets, drops
}
