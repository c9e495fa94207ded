//go:build linux

package lab

import (
	"fmt"
	"hash/fnv"
	"net/netip"
	"strings"

	"github.com/vishvananda/netlink"

	lrnetns "github.com/linerate/linerate/internal/netns"
)

// freeMgmtNet picks the lab's management subnet 198.19.K.0/24: K from a
// hash of the name, moved on while the calling namespace already has an
// address in that subnet (another lab).
func freeMgmtNet(name string) (netip.Prefix, error) {
	addrs, err := netlink.AddrList(nil, netlink.FAMILY_V4)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("management network: list addresses: %w", err)
	}
	h := fnv.New32a()
	h.Write([]byte(name))
	start := int(h.Sum32() % 250)
	for i := range 250 {
		k := byte(1 + (start+i)%250)
		p := netip.PrefixFrom(netip.AddrFrom4([4]byte{198, 19, k, 0}), 24)
		used := false
		for _, a := range addrs {
			if ip, ok := netip.AddrFromSlice(a.IP); ok && p.Contains(ip.Unmap()) {
				used = true
				break
			}
		}
		if !used {
			return p, nil
		}
	}
	return netip.Prefix{}, fmt.Errorf("management network: every 198.19.K.0/24 is in use here")
}

func mgmtAddr(net netip.Prefix, host int) netip.Prefix {
	b := net.Addr().As4()
	b[3] = byte(host)
	return netip.PrefixFrom(netip.AddrFrom4(b), net.Bits())
}

// shape puts a tbf qdisc of bps bits per second on iface (egress) in ns,
// buffering about as much as a switch port: a burst of 5 ms at the rate
// (at least 16 KiB, so jumbo frames pass) and a queue of 30 ms more:
// with the burst, more than a paced sender may fall behind its schedule
// and then catch up at full speed (the userspace engines' 30 ms), so a
// scheduling delay on a busy sending host is not misread as the switch's
// loss (seen in CI: a 2 s trial at 75 % of the rate lost frames behind a
// 20 ms queue). A trial must be long against that buffer: 1 s at 104 % or
// 2 s at 102 % of the rate fills it.
func shape(ns *lrnetns.NS, iface string, bps uint64) error {
	rate := bps / 8 // bytes per second
	if rate < 1000 {
		return fmt.Errorf("shape %s: %d bit/s: want at least 8 kbit/s", iface, bps)
	}
	burst, limit := ShaperBuffer(bps)
	// tbf's buffer is the time to send the burst at the rate, in the
	// packet scheduler's 64 ns ticks.
	ticks := burst * 1e9 / rate / 64
	return ns.Do(func() error {
		l, err := netlink.LinkByName(iface)
		if err != nil {
			return fmt.Errorf("shape %s: %w", iface, err)
		}
		q := &netlink.Tbf{
			QdiscAttrs: netlink.QdiscAttrs{LinkIndex: l.Attrs().Index, Handle: netlink.MakeHandle(1, 0), Parent: netlink.HANDLE_ROOT},
			Rate:       rate, Limit: uint32(min(limit, 1<<31)), Buffer: uint32(min(ticks, 1<<31)),
		}
		if err := netlink.QdiscAdd(q); err != nil {
			return fmt.Errorf("shape %s to %d bit/s: add tbf qdisc: %w", iface, bps, err)
		}
		return nil
	})
}

// ShaperBuffer is what the lab's shaper of bps bits per second holds, in
// bytes (of frames without FCS, as tbf counts them): its bucket, which
// passes a burst at once after an idle time, and its queue (tbf's limit),
// which takes the rest of a burst until it overflows. After an idle
// time a burst faster than the rate loses nothing up to about
// floor(bucket/frame) + floor(queue/frame) frames, plus what the rate
// drains while it lasts: the lab's known back-to-back value.
func ShaperBuffer(bps uint64) (bucket, queue uint64) {
	rate := bps / 8
	// The bucket holds 5 ms of the rate, at least 4 KiB (two full-size
	// frames): a larger floor lets a slow shaper pass well over its
	// rate in a short trial (16 KiB at 2 Mbit/s is 65 ms of it).
	bucket = max(rate/200, 4<<10)
	return bucket, rate*3/100 + bucket
}

// RemoveMgmtLinks deletes the management link a crashed lab left in the
// calling namespace (name "" = every lab's), and returns what it deleted.
// Removing the lab's switch namespace deletes it too, but later.
func RemoveMgmtLinks(name string) ([]string, error) {
	links, err := netlink.LinkList()
	if err != nil {
		return nil, fmt.Errorf("list links: %w", err)
	}
	var removed []string
	for _, l := range links {
		n := l.Attrs().Name
		if (name == "" && strings.HasPrefix(n, MgmtLinkName(""))) || (name != "" && n == MgmtLinkName(name)) {
			if err := netlink.LinkDel(l); err != nil {
				return removed, fmt.Errorf("delete management link %s: %w", n, err)
			}
			removed = append(removed, n)
		}
	}
	return removed, nil
}
