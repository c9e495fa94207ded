//go:build linux

package xdp

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// ownProgramDrivers are drivers whose ndo_xdp_xmit works only while a
// native XDP program is attached to the transmitting interface itself:
// they set up their XDP transmit queues when a program is attached, and
// without one refuse every frame (virtio_net: ENXIO) before any counter
// moves. A kernel with xdp-features (6.3+) says so itself (no ndo-xmit
// bit until a program is attached); on an older one, such as the VM
// lab's Debian 6.1 guest, only the driver's name tells. The backend
// attaches its own program to such an interface for a send (needsOwn).
var ownProgramDrivers = []string{"virtio_net"}

// rebuildDrivers are drivers whose ndo_xdp_xmit moves a frame's data
// pointer back over a header of their own: virtio_net (data -= hdr_len,
// len += hdr_len: its 12-byte virtio-net header goes in the headroom).
// In live-frame mode a page, and the frame descriptor in it, comes round
// again for a later run, and a kernel that then resets only the run's
// context (the VM lab's Debian 6.1) transmits the descriptor as the
// driver left it: 12 zero bytes more in front of the frame each time
// (seen in the VM lab: frames of 72, 84 … 156 bytes on the wire where 60
// were meant, which no receiver counts). A run that changes the packet's
// bounds has the kernel rebuild the descriptor from the context
// (xdp_update_frame_from_buff), so for these drivers the template is
// rebuildTrim bytes longer and every run cuts them off.
var rebuildDrivers = []string{"virtio_net"}

// rebuildTrim is the bytes a run cuts off (rebuildDrivers).
const rebuildTrim = 4

// trimFor is the bytes each run cuts off for driver (rebuildDrivers),
// or 0.
func trimFor(driver string) int {
	if slices.Contains(rebuildDrivers, driver) {
		return rebuildTrim
	}
	return 0
}

// xmitStat is a per-queue XDP transmit counter of a driver's ethtool
// statistics: veth's tx_queue_N_xdp_xmit (frames its peer took),
// virtio_net's tx_queue_N_xdp_tx (frames offered to the queue, of which
// tx_queue_N_xdp_tx_drops did not fit).
var xmitStat = regexp.MustCompile(`^tx_queue_(\d+)_xdp_(xmit|tx)$`)

// transmitted is what a driver's XDP transmit counters say it sent
// between before and after: the total, per queue where the counters are
// per queue, and whether the driver has such counters at all. A counter
// that went backwards (a reset) counts 0.
func transmitted(before, after map[string]uint64) (total uint64, queues map[int]uint64, found bool) {
	delta := func(name string) uint64 {
		if a, b := after[name], before[name]; a > b {
			return a - b
		}
		return 0
	}
	queues = map[int]uint64{}
	for name := range after {
		var n uint64
		switch {
		case strings.HasPrefix(name, "tx_queue_") && strings.HasSuffix(name, "_xdp_tx"):
			// virtio_net: offered less refused. (rx_queue_N_xdp_tx,
			// veth's and virtio_net's, are XDP_TX of received frames.)
			n = delta(name) - min(delta(name+"_drops"), delta(name))
		case strings.HasSuffix(name, "xdp_xmit"):
			n = delta(name)
		default:
			continue
		}
		found = true
		total += n
		if m := xmitStat.FindStringSubmatch(name); m != nil {
			q, _ := strconv.Atoi(m[1])
			queues[q] += n
		}
	}
	return total, queues, found
}

// noneTransmitted is the error of a run whose driver transmitted none of
// its packets.
func noneTransmitted(iface, driver string, packets uint64) error {
	return unsupported(iface, "driver %s transmitted none of the %d frames (its XDP transmit counters did not move): for a veth, attach an XDP program to the peer or turn GRO on there (ethtool -K PEER gro on)", driver, packets)
}

// xmitQueue is the transmit queue whose counters hold the frames a
// thread on cpu sent, for a driver whose per-queue counters tell (ok),
// given the queues its statistics list and the kernel's possible CPUs
// (nr_cpu_ids). A veth's peer receive queue is the sending CPU modulo
// the queue count. virtio_net (its virtnet_xdp_get_sq) uses an XDP queue
// of its own per CPU past the stack's when it has more queue pairs in
// use than CPUs (the XDP ones counted), else the CPU modulo the queues,
// shared with the stack under its lock (the VM lab's guests: 4 for 4
// vCPUs). Other drivers pick by rules of their own: not ok.
func xmitQueue(driver string, cpu, queues, cpus int) (int, bool) {
	if queues <= 0 {
		return 0, false
	}
	switch driver {
	case "veth":
		return cpu % queues, true
	case "virtio_net":
		if queues > cpus {
			return queues - cpus + cpu, true
		}
		return cpu % queues, true
	}
	return 0, false
}
