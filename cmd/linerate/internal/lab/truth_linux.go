//go:build linux

package lab

import (
	"fmt"
	"time"

	"github.com/vishvananda/netlink"

	"github.com/linerate/linerate/coordinator"
)

// Truth reads every switch port's counters (cumulative since Up): the
// lab's own account of a run, `"lab": {"switch_ports": …}`.
func (l *Lab) Truth() (coordinator.PathTruth, error) {
	var t coordinator.PathTruth
	for _, h := range l.Hosts() {
		p := coordinator.PortTruth{Name: h.Name, To: "switch"}
		if h.Role == "receiver" || l.Spec.Both {
			p.To, p.ShapeBPS = h.Name, l.Spec.ShapeBPS
		}
		if d, ok := l.delays[h.Name]; ok {
			p.DelayUs, p.JitterUs = uint64(d.D/time.Microsecond), uint64(d.Jitter/time.Microsecond)
		}
		if h.Port != nil {
			st, err := h.Port.Stats()
			if err != nil {
				return coordinator.PathTruth{}, err
			}
			p.TestPackets, p.ProgDrops, p.Loss, p.TaggedPackets = st.Test, st.Dropped, h.Port.Loss.String(), st.Tagged
		}
		if err := l.Switch.Do(func() error {
			link, err := netlink.LinkByName(h.Name)
			if err != nil {
				return err
			}
			if s := link.Attrs().Statistics; s != nil {
				// The port's rx drops are of frames from its host, its
				// tx drops of frames toward it.
				p.TxPackets, p.LinkDrops = s.TxPackets, s.RxDropped+s.TxDropped
				p.InDrops, p.OutDrops = s.RxDropped, s.TxDropped
			}
			qs, err := netlink.QdiscList(link)
			if err != nil {
				return err
			}
			p.QdiscDrops = rootQdiscDrops(qs)
			return nil
		}); err != nil {
			return coordinator.PathTruth{}, fmt.Errorf("lab %s: read switch port %s: %w", l.Spec.Name, h.Name, err)
		}
		p.InDrops += p.ProgDrops
		p.OutDrops += p.QdiscDrops
		p.Drops = p.ProgDrops + p.QdiscDrops + p.LinkDrops
		t.SwitchPorts = append(t.SwitchPorts, p)
	}
	return t, nil
}

// rootQdiscDrops is the drops of a port's root qdisc, the shaper's or
// the default one's. The list holds a classful root's children too, and
// the root already counts theirs: mq on a multiqueue tap sums its
// queues' qdiscs when dumped, tbf counts its inner qdisc's drops as its
// own. So the children are not added again.
func rootQdiscDrops(qs []netlink.Qdisc) uint64 {
	var n uint64
	for _, q := range qs {
		if a := q.Attrs(); a.Parent == netlink.HANDLE_ROOT && a.Statistics != nil && a.Statistics.Queue != nil {
			n += uint64(a.Statistics.Queue.Drops)
		}
	}
	return n
}
