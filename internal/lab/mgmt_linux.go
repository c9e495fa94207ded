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
// (at least 16 KiB, so jumbo frames and a paced sender's catch-up pass)
// and a queue of 20 ms more. A trial must be long against that buffer:
// 1 s at 107 % of the rate fits in 75 ms of it without loss.
func shape(ns *lrnetns.NS, iface string, bps uint64) error {
	rate := bps / 8 // bytes per second
	if rate < 1000 {
		return fmt.Errorf("shape %s: %d bit/s: want at least 8 kbit/s", iface, bps)
	}
	burst := max(rate/200, 16<<10)
	limit := rate/50 + burst
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

// PortTruth is one switch port as the switch counted it. Sender ports
// carry the port program (its drops); receiver ports carry the shaper
// (its qdisc drops) and count what left toward the receiver.
type PortTruth struct {
	Name        string `json:"name"`                // the port: named after the host it faces
	To          string `json:"to"`                  // where its frames go: "switch" (from a sender) or the receiver
	TxPackets   uint64 `json:"tx_packets"`          // frames the port sent on (toward its receiver)
	TestPackets uint64 `json:"test_packets"`        // test frames the port program saw (sender ports)
	Drops       uint64 `json:"drops"`               // everything the port dropped: program + qdisc + link
	QdiscDrops  uint64 `json:"qdisc_drops"`         // the shaper's drops
	ProgDrops   uint64 `json:"program_drops"`       // the lossy program's drops
	LinkDrops   uint64 `json:"link_drops"`          // the port's own rx_dropped + tx_dropped (overload)
	Loss        string `json:"loss,omitempty"`      // the port program's setting
	ShapeBPS    uint64 `json:"shape_bps,omitempty"` // the shaper's rate
}

// Truth is the lab's own account of a run: `"lab": {"switch_ports": …}`.
type Truth struct {
	SwitchPorts []PortTruth `json:"switch_ports"`
}

// Drops is every frame the switch dropped.
func (t Truth) Drops() uint64 {
	var n uint64
	for _, p := range t.SwitchPorts {
		n += p.Drops
	}
	return n
}

// Sub is t minus an earlier reading base: what happened in between.
func (t Truth) Sub(base Truth) Truth {
	out := Truth{SwitchPorts: append([]PortTruth(nil), t.SwitchPorts...)}
	for i := range out.SwitchPorts {
		p := &out.SwitchPorts[i]
		for _, b := range base.SwitchPorts {
			if b.Name != p.Name {
				continue
			}
			p.TxPackets -= min(p.TxPackets, b.TxPackets)
			p.TestPackets -= min(p.TestPackets, b.TestPackets)
			p.Drops -= min(p.Drops, b.Drops)
			p.QdiscDrops -= min(p.QdiscDrops, b.QdiscDrops)
			p.ProgDrops -= min(p.ProgDrops, b.ProgDrops)
			p.LinkDrops -= min(p.LinkDrops, b.LinkDrops)
		}
	}
	return out
}

// Truth reads every switch port's counters (cumulative since Up).
func (l *Lab) Truth() (Truth, error) {
	var t Truth
	for _, h := range l.Hosts() {
		p := PortTruth{Name: h.Name, To: "switch"}
		if h.Role == "receiver" {
			p.To, p.ShapeBPS = h.Name, l.Spec.ShapeBPS
		}
		if h.Port != nil {
			st, err := h.Port.Stats()
			if err != nil {
				return Truth{}, err
			}
			p.TestPackets, p.ProgDrops, p.Loss = st.Test, st.Dropped, h.Port.Loss.String()
		}
		if err := l.Switch.Do(func() error {
			link, err := netlink.LinkByName(h.Name)
			if err != nil {
				return err
			}
			if s := link.Attrs().Statistics; s != nil {
				p.TxPackets, p.LinkDrops = s.TxPackets, s.RxDropped+s.TxDropped
			}
			qs, err := netlink.QdiscList(link)
			if err != nil {
				return err
			}
			for _, q := range qs {
				if st := q.Attrs().Statistics; st != nil && st.Queue != nil {
					p.QdiscDrops += uint64(st.Queue.Drops)
				}
			}
			return nil
		}); err != nil {
			return Truth{}, fmt.Errorf("lab %s: read switch port %s: %w", l.Spec.Name, h.Name, err)
		}
		p.Drops = p.ProgDrops + p.QdiscDrops + p.LinkDrops
		t.SwitchPorts = append(t.SwitchPorts, p)
	}
	return t, nil
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
