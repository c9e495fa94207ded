//go:build linux

package receiver

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/linerate/linerate/internal/ethtool"
)

// linkStats reads an interface's counters through a route netlink
// socket and an ethtool reader opened in the interface's namespace, so
// that reading them later works from any thread.
type linkStats struct {
	name   string
	index  int
	driver string
	nl     int             // NETLINK_ROUTE socket
	eth    *ethtool.Reader // the driver's statistics (ethtool -S)
	seq    uint32
}

// openLinkStats must run in the interface's network namespace.
func openLinkStats(name string) (_ *linkStats, err error) {
	s := &linkStats{name: name, nl: -1}
	defer func() {
		if err != nil {
			s.close()
		}
	}()
	if s.eth, err = ethtool.Open(name); err != nil {
		return nil, err
	}
	if s.index, err = ifindex(name); err != nil {
		return nil, err
	}
	if s.nl, err = unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_ROUTE); err != nil {
		return nil, fmt.Errorf("open netlink to read %s's counters: %w", name, err)
	}
	if err := unix.Bind(s.nl, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return nil, fmt.Errorf("bind netlink to read %s's counters: %w", name, err)
	}
	if d, err := s.eth.Driver(); err == nil {
		s.driver = d
	}
	return s, nil
}

// ifindex looks name up (SIOCGIFINDEX) in the calling thread's namespace.
func ifindex(name string) (int, error) {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return 0, fmt.Errorf("open a socket for ioctls on %s: %w", name, err)
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq(name)
	if err != nil {
		return 0, fmt.Errorf("interface %q: %w (%w)", name, ErrNoInterface, err)
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFINDEX, ifr); err != nil {
		if errors.Is(err, unix.ENODEV) {
			return 0, fmt.Errorf("interface %s: %w", name, ErrNoInterface)
		}
		return 0, fmt.Errorf("look up interface %s: %w", name, err)
	}
	return int(ifr.Uint32()), nil
}

func (s *linkStats) close() {
	if s.nl >= 0 {
		unix.Close(s.nl)
		s.nl = -1
	}
	if s.eth != nil {
		s.eth.Close()
	}
}

// read returns the counters now. Driver statistics the driver does not
// offer (EOPNOTSUPP) read as 0.
func (s *linkStats) read() (LinkCounters, error) {
	var c LinkCounters
	st, err := s.stats64()
	if err != nil {
		return c, fmt.Errorf("read counters of %s (ifindex %d): %w", s.name, s.index, err)
	}
	// struct rtnl_link_stats64: rx_packets [0], rx_dropped [6],
	// rx_fifo_errors [14], rx_missed_errors [15].
	c.RxPackets, c.RxDropped, c.RxFifo, c.RxMissed = st[0], st[6], st[14], st[15]
	stats, err := s.eth.Stats()
	if err != nil {
		if errors.Is(err, ethtool.ErrNotSupported) {
			return c, nil
		}
		return c, err
	}
	c.XDPPackets, c.XDPDrops = sumXDPStats(stats)
	c.RxDropped = hostRxDropped(s.driver, c.RxDropped, c.XDPDrops)
	return c, nil
}

// xdpDropsInRxDropped are the drivers that count their XDP_DROP verdicts
// in rx_dropped as well as in their xdp_drops statistics: virtio_net
// (a receive queue's drops include its xdp_drops). The receiver's own
// program drops every frame it counted, so there they are not the host's
// drops.
var xdpDropsInRxDropped = map[string]bool{"virtio_net": true}

// hostRxDropped is rx_dropped without the XDP_DROP verdicts a driver
// counts in it (xdpDropsInRxDropped).
func hostRxDropped(driver string, rxDropped, xdpDrops uint64) uint64 {
	if xdpDropsInRxDropped[driver] {
		return rxDropped - min(rxDropped, xdpDrops)
	}
	return rxDropped
}

// stats64 returns the first 16 counters of the link's IFLA_STATS64
// attribute.
func (s *linkStats) stats64() ([16]uint64, error) {
	var st [16]uint64
	attrs, err := s.attrs()
	if err != nil {
		return st, err
	}
	for _, a := range attrs {
		if a.Attr.Type == unix.IFLA_STATS64 && len(a.Value) >= 16*8 {
			for i := range st {
				st[i] = binary.NativeEndian.Uint64(a.Value[8*i:])
			}
			return st, nil
		}
	}
	return st, errors.New("netlink RTM_NEWLINK: no IFLA_STATS64")
}

// rxQueues is the link's number of receive queues (IFLA_NUM_RX_QUEUES):
// those it was made with; the driver may use fewer (ethtool -L).
func (s *linkStats) rxQueues() (int, error) {
	attrs, err := s.attrs()
	if err != nil {
		return 0, fmt.Errorf("read the receive queues of %s (ifindex %d): %w", s.name, s.index, err)
	}
	for _, a := range attrs {
		if a.Attr.Type == unix.IFLA_NUM_RX_QUEUES && len(a.Value) >= 4 {
			return int(binary.NativeEndian.Uint32(a.Value)), nil
		}
	}
	return 0, fmt.Errorf("read the receive queues of %s (ifindex %d): no IFLA_NUM_RX_QUEUES", s.name, s.index)
}

// attrs asks for the link (RTM_GETLINK by index) and returns its
// attributes.
func (s *linkStats) attrs() ([]syscall.NetlinkRouteAttr, error) {
	s.seq++
	req := make([]byte, unix.SizeofNlMsghdr+unix.SizeofIfInfomsg)
	hdr := (*unix.NlMsghdr)(unsafe.Pointer(&req[0]))
	*hdr = unix.NlMsghdr{Len: uint32(len(req)), Type: unix.RTM_GETLINK, Flags: unix.NLM_F_REQUEST, Seq: s.seq}
	ifi := (*unix.IfInfomsg)(unsafe.Pointer(&req[unix.SizeofNlMsghdr]))
	ifi.Family, ifi.Index = unix.AF_UNSPEC, int32(s.index)
	if err := unix.Sendto(s.nl, req, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return nil, fmt.Errorf("netlink RTM_GETLINK: %w", err)
	}
	buf := make([]byte, 1<<16)
	for {
		n, _, err := unix.Recvfrom(s.nl, buf, 0)
		if err != nil {
			if errors.Is(err, unix.EINTR) {
				continue
			}
			return nil, fmt.Errorf("netlink RTM_GETLINK reply: %w", err)
		}
		msgs, err := syscall.ParseNetlinkMessage(buf[:n])
		if err != nil {
			return nil, fmt.Errorf("netlink RTM_GETLINK reply: %w", err)
		}
		for _, m := range msgs {
			if m.Header.Seq != s.seq {
				continue // a late reply to an earlier request
			}
			switch m.Header.Type {
			case unix.NLMSG_ERROR:
				if len(m.Data) >= 4 {
					if e := int32(binary.NativeEndian.Uint32(m.Data)); e != 0 {
						return nil, fmt.Errorf("netlink RTM_GETLINK: %w", unix.Errno(-e))
					}
				}
				return nil, errors.New("netlink RTM_GETLINK: empty reply")
			case unix.RTM_NEWLINK:
				if len(m.Data) < unix.SizeofIfInfomsg {
					return nil, errors.New("netlink RTM_NEWLINK: short message")
				}
				attrs, err := syscall.ParseNetlinkRouteAttr(&m)
				if err != nil {
					return nil, fmt.Errorf("netlink RTM_NEWLINK attributes: %w", err)
				}
				return attrs, nil
			}
		}
	}
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
