//go:build linux

package lab

import (
	"testing"

	"github.com/vishvananda/netlink"
)

// A multiqueue tap's port lists its root mq, which sums its queues'
// drops, and each queue's qdisc: the port dropped what the root says,
// not twice that.
func TestRootQdiscDrops(t *testing.T) {
	q := func(parent uint32, drops uint32) netlink.Qdisc {
		return &netlink.GenericQdisc{QdiscAttrs: netlink.QdiscAttrs{Parent: parent, Statistics: &netlink.QdiscStatistics{Queue: &netlink.GnetStatsQueue{Drops: drops}}}}
	}
	mq := netlink.MakeHandle(0x8001, 0)
	qs := []netlink.Qdisc{q(netlink.HANDLE_ROOT, 7), q(mq|1, 3), q(mq|2, 4), &netlink.GenericQdisc{QdiscAttrs: netlink.QdiscAttrs{Parent: mq | 3}}}
	if got := rootQdiscDrops(qs); got != 7 {
		t.Errorf("mq root of 7 drops over queues of 3 and 4: %d, want 7", got)
	}
	if got := rootQdiscDrops([]netlink.Qdisc{q(netlink.HANDLE_ROOT, 12), q(netlink.HANDLE_INGRESS, 0)}); got != 12 {
		t.Errorf("a tbf root of 12 drops: %d", got)
	}
}
