//go:build linux

package xdp

import (
	"errors"
	"strings"
	"testing"

	"github.com/vishvananda/netlink/nl"

	"github.com/linerate/linerate/internal/xdpfeat"
	"github.com/linerate/linerate/pktgen"
)

// TestNeedsOwn is the decision for every kind of interface the backend
// meets: the VM lab's virtio_net on 6.1 (no xdp-features: its name
// decides), a 6.3+ driver whose xdp-features lack ndo-xmit until a
// program is attached, drivers that transmit without one, and each
// program that may be attached already.
func TestNeedsOwn(t *testing.T) {
	const ndo, basic = xdpfeat.NdoXmit | xdpfeat.Basic, xdpfeat.Basic
	none := xdpState{}
	drv := xdpState{mode: nl.XDP_ATTACHED_DRV, id: 41}
	for _, tc := range []struct {
		name       string
		driver     string
		feat       uint64
		featKnown  bool
		force      bool
		st         xdpState
		attach     bool
		use        bool
		why        string // in the note
		noteSaying string
	}{
		{"virtio_net on 6.1, nothing attached", "virtio_net", 0, false, false, none, true, false, "this kernel has no xdp-features", "attached its own XDP program lr_xmit_pass (XDP_PASS, native mode) to data0 for the send and detached it after: driver virtio_net transmits XDP frames only while"},
		{"virtio_net on 6.1, a native program there", "virtio_net", 0, false, false, drv, false, true, "driver virtio_net", "sent through the native XDP program users_prog (id 41) already attached to data0, and left it there"},
		{"virtio_net on 6.1, native beside offloaded", "virtio_net", 0, false, false, xdpState{mode: xdpAttachedMulti, id: 7}, false, true, "", "already attached"},
		{"6.3+: no ndo-xmit until attached", "virtio_net", basic, true, false, none, true, false, "no ndo-xmit in its xdp-features until an XDP program is attached to data0", ""},
		{"6.3+: ndo-xmit now", "virtio_net", ndo, true, false, drv, false, false, "", ""},
		{"6.3+: ixgbe transmits", "ixgbe", ndo, true, false, none, false, false, "", ""},
		{"6.1: another driver is not known to need one", "ixgbe", 0, false, false, none, false, false, "", ""},
		{"veth on 6.1: its peer decides", "veth", 0, false, false, none, false, false, "", ""},
		{"a test's veth made to need one", "veth", ndo, true, true, none, true, false, "the test made driver veth need one", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := needsOwn("data0", tc.driver, tc.feat, tc.featKnown, tc.force, tc.st, "users_prog")
			if err != nil || p.attach != tc.attach || p.use != tc.use || !strings.Contains(p.why, tc.why) {
				t.Fatalf("needsOwn = %+v, %v; want attach %v use %v why %q", p, err, tc.attach, tc.use, tc.why)
			}
			note := p.note("data0")
			if (tc.attach || tc.use) == (note == "") || !strings.Contains(note, tc.noteSaying) {
				t.Errorf("note %q, want one saying %q", note, tc.noteSaying)
			}
		})
	}
	// A program in another mode: refused by name, whatever the kernel.
	for _, st := range []xdpState{{mode: nl.XDP_ATTACHED_SKB, id: 9}, {mode: nl.XDP_ATTACHED_HW, id: 9}} {
		for _, known := range []bool{false, true} {
			_, err := needsOwn("data0", "virtio_net", basic, known, false, st, "users_prog")
			if !errors.Is(err, pktgen.ErrUnsupported) || !strings.Contains(err.Error(), "an XDP program users_prog (id 9) is attached to data0 in "+modeName(st.mode)+" mode") ||
				!strings.Contains(err.Error(), "kernel refuses a native program beside it") {
				t.Errorf("mode %d, xdp-features known %v: %v; want ErrUnsupported naming the program, its mode and why", st.mode, known, err)
			}
		}
	}
}
