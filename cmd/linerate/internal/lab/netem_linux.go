//go:build linux

package lab

import (
	"fmt"
	"math"
	"time"

	"github.com/vishvananda/netlink"
)

// netemLimit is the frames a lab's netem holds: a delay D at R frames
// per second holds D×R of them (20 ms at 5 kpps: 100). Past it netem
// refuses a frame, and kernel pktgen in queue_xmit counts an error and
// builds that frame again: the sender slows, nothing is lost.
const netemLimit = 50000

// SetNetem makes d the root qdisc of the interface iface in the calling
// process's network namespace: netem delaying every frame it sends by
// d.D ± d.Jitter, replacing whatever root qdisc was there; the zero
// Delay removes a netem root qdisc and leaves any other. Frames reach a
// qdisc only from the stack or a generator that queues them (pktgen's
// xmit_mode queue_xmit); pktgen's default start_xmit passes it by.
func SetNetem(iface string, d Delay) error {
	if err := d.Check(); err != nil {
		return err
	}
	link, err := netlink.LinkByName(iface)
	if err != nil {
		return fmt.Errorf("netem on %s: %w", iface, err)
	}
	if d.IsZero() {
		q, err := rootNetem(link)
		if err != nil || q == nil {
			return err
		}
		if err := netlink.QdiscDel(q); err != nil {
			return fmt.Errorf("remove netem from %s: %w", iface, err)
		}
		return nil
	}
	q := netlink.NewNetem(netlink.QdiscAttrs{LinkIndex: link.Attrs().Index, Handle: netlink.MakeHandle(1, 0), Parent: netlink.HANDLE_ROOT},
		netlink.NetemQdiscAttrs{Latency: uint32(d.D / time.Microsecond), Jitter: uint32(d.Jitter / time.Microsecond), Limit: netemLimit})
	if err := netlink.QdiscReplace(q); err != nil {
		return fmt.Errorf("netem delay %s on %s (needs sch_netem): %w", d, iface, err)
	}
	return nil
}

// ReadNetem is the delay of iface's root netem qdisc as the kernel holds
// it (the zero Delay without one).
func ReadNetem(iface string) (Delay, error) {
	link, err := netlink.LinkByName(iface)
	if err != nil {
		return Delay{}, fmt.Errorf("read netem of %s: %w", iface, err)
	}
	q, err := rootNetem(link)
	if err != nil || q == nil {
		return Delay{}, err
	}
	// The kernel keeps netem's times in scheduler ticks.
	us := func(ticks uint32) time.Duration {
		return time.Duration(math.Round(float64(ticks)/netlink.TickInUsec())) * time.Microsecond
	}
	return Delay{D: us(q.Latency), Jitter: us(q.Jitter)}, nil
}

// rootNetem is link's root qdisc when it is netem, else nil.
func rootNetem(link netlink.Link) (*netlink.Netem, error) {
	qs, err := netlink.QdiscList(link)
	if err != nil {
		return nil, fmt.Errorf("list the qdiscs of %s: %w", link.Attrs().Name, err)
	}
	for _, q := range qs {
		if n, ok := q.(*netlink.Netem); ok && n.Parent == netlink.HANDLE_ROOT {
			return n, nil
		}
	}
	return nil, nil
}

// ApplyNetem sets d on iface (SetNetem) and reads it back: an interface
// that does not then hold d is an error, so that a lab that asked for a
// delay never runs without it. It returns what the kernel holds.
func ApplyNetem(iface string, d Delay) (Delay, error) {
	if err := SetNetem(iface, d); err != nil {
		return Delay{}, err
	}
	got, err := ReadNetem(iface)
	if err != nil {
		return Delay{}, err
	}
	if got != d {
		return got, fmt.Errorf("netem on %s: the kernel holds delay %s, want %s", iface, got, d)
	}
	return got, nil
}
