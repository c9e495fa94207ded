package coordinator

import (
	"fmt"

	"github.com/linerate/linerate/pktgen"
	lineratev1 "github.com/linerate/linerate/proto/linerate/v1"
)

// Kernel pktgen's surface beyond one frame per packet, as a run sets it:
//
//   - Burst and CloneSkb send each built frame several times on purpose
//     (Copies: clone_skb times each built skb, burst times each transmit
//     call), its first copy's sequence on each; pktgen numbers every
//     frame it sends, so the next built frame's sequence is Copies more.
//     The receivers are armed with Repeats and SeqStride of Copies, so
//     that no planned copy is a duplicate and a stream's sequences count
//     built frames; the books count frames on the wire on both sides: a
//     sender's count is every copy (pktgen's own count), and a
//     receiver's every copy it got, so sent = count (a multiple of the
//     burst: pktgen sends whole bursts) and an exact run has received =
//     sent and ⌈count / Copies⌉ built frames (max_seq) a thread (the
//     last frame has fewer copies where Copies does not divide it).
//     pktgen ends a burst early when the device's queue stops (a full
//     ring): the next frame's sequence is then fewer than Copies on,
//     in the step of the one cut short, whose count its copies join,
//     and the thread may send up to burst − 1 past its count. So a run
//     with bursts counts every copy that arrived as received, duplicates
//     too (Stream.lost), and its report says what such duplicates are.
//   - UDPSrcMin to UDPSrcMax is the UDP source port range every stream
//     walks, frame by frame. A receiver's RSS (or a multiqueue tap's flow
//     hash) hashes the ports with the addresses, so one stream's frames
//     spread over its queues, while the stream stays whole: a receiver
//     keys a stream by its addresses and destination port, never the
//     source port, so its sequence is counted as one. A destination port
//     range is not offered: the destination port tells the run's senders
//     apart (portOf), and pktgen's one sequence counter per thread would
//     be split into as many streams, each with the others' sequences
//     missing. pktgen's flows are not offered either: they keep a
//     destination address per flow (and IPsec state), never ports, and a
//     run sends each stream to its receiver's one address.
//   - QueueMapMin to QueueMapMax is the TX queue range every thread
//     sends on in turn (pktgen's queue_map_min/max) instead of the queue
//     its CPU's IRQ serves: each thread is then alone on its CPU.
//   - NodeAlloc has each sender allocate its frames on its NIC's NUMA
//     node, as its agent read it (pktgen's node and flag NODE).
//
// The spec alone refuses what no host could do (the userspace backends
// do none of these but the port range); each agent refuses, with the
// kernel backend's own probe, what its device or kernel cannot (burst and
// clone_skb without skb sharing, a node on a NIC without one, a queue
// beyond the device's).

// maxCopies bounds Copies: the receivers count sequences in steps of the
// copies, and beyond this the bits left cannot place even their
// narrowest window (receiver.StrideWindow).
const maxCopies = 8192

// Copies is how many times every sequence number is sent
// (pktgen.Config.Copies): 1 without burst and clone_skb.
func (s *Spec) Copies() int {
	c := pktgen.Config{Burst: s.Burst, CloneSkb: s.CloneSkb}
	return c.Copies()
}

// burstUnit is the packets a thread's count is a multiple of: its burst.
func (s *Spec) burstUnit() uint64 { return uint64(max(s.Burst, 1)) }

// CheckSurface refuses, naming the input and what would be valid, what
// the spec alone tells pktgen cannot do of its xmit mode and surface, for
// its backend (pktgen.BackendAuto: "" is taken as it). A campaign's spec
// checks its trials' with it.
func (s *Spec) CheckSurface() error {
	if err := s.checkXmitMode(); err != nil {
		return err
	}
	if s.Burst < 0 || s.Burst > 65535 {
		return fmt.Errorf("burst %d: want 1 to 65535 (0: 1)", s.Burst)
	}
	if s.CloneSkb < 0 || s.CloneSkb > maxCopies {
		return fmt.Errorf("clone_skb %d: want 0 to %d", s.CloneSkb, maxCopies)
	}
	if c := s.Copies(); c > maxCopies || c&(c-1) != 0 {
		return fmt.Errorf("burst %d × clone_skb %d: %d copies of each frame: want a power of two up to %d (pktgen numbers every frame it sends: the receivers count its sequence in steps of the copies, exactly across its 32-bit wrap only when they divide 2^32)", max(s.Burst, 1), max(s.CloneSkb, 1), c, maxCopies)
	}
	kernelOnly := []struct {
		name string
		set  bool
	}{{"burst", s.Burst > 1}, {"clone_skb", s.CloneSkb > 0}, {"queue_map", s.HasQueueMap}, {"node_alloc", s.NodeAlloc}}
	for _, k := range kernelOnly {
		if k.set && s.Backend != "" && s.Backend != pktgen.BackendAuto && s.Backend != pktgen.BackendKernel {
			return fmt.Errorf("%s: kernel pktgen only (backend %s or %s); backend %s sends every frame once, on the queue of its CPU, from its own memory", k.name, pktgen.BackendKernel, pktgen.BackendAuto, s.Backend)
		}
	}
	if s.Burst > 1 && s.XmitMode == pktgen.XmitQueue {
		return fmt.Errorf("burst %d with xmit mode %s: pktgen refuses bursts through the qdisc: want burst 1 or xmit mode %s", s.Burst, pktgen.XmitQueue, pktgen.XmitStart)
	}
	if s.CloneSkb > 0 && len(s.IMIX) > 0 {
		return fmt.Errorf("clone_skb %d with an imix: pktgen refuses it (each frame draws its own size): want clone_skb 0", s.CloneSkb)
	}
	if u := s.burstUnit(); s.Count > 0 && s.Count%u != 0 {
		return fmt.Errorf("count %d with burst %d: pktgen sends whole bursts: want a multiple of %d (e.g. %d)", s.Count, s.Burst, u, (s.Count/u+1)*u)
	}
	if u := s.burstUnit(); s.Count > 0 && s.Threads > 0 && s.Count/u < uint64(s.Threads) {
		return fmt.Errorf("count %d with burst %d: fewer bursts than the %d threads per flow: want at least %d", s.Count, s.Burst, s.Threads, u*uint64(s.Threads))
	}
	switch lo, hi := s.UDPSrcMin, s.UDPSrcMax; {
	case lo == 0 && hi == 0:
	case lo < 1 || hi < lo || hi > 65534:
		return fmt.Errorf("udp source ports %d-%d: want 1 <= min <= max <= 65534", lo, hi)
	}
	if s.HasQueueMap && (s.QueueMapMin < 0 || s.QueueMapMax < s.QueueMapMin || s.QueueMapMax > 65535) {
		return fmt.Errorf("queue map %d-%d: want 0 <= min <= max <= 65535 (TX queues; each sender refuses queues beyond its device's)", s.QueueMapMin, s.QueueMapMax)
	}
	return nil
}

// surface is what of a spec's pktgen surface every sender is configured
// with.
type surface struct {
	burst, cloneSkb    int
	srcMin, srcMax     int
	queueMap           bool
	queueMin, queueMax int
	nodeAlloc          bool
}

// surface is s's, for the senders' configurations.
func (s *Spec) surface() surface {
	return surface{
		burst: s.Burst, cloneSkb: s.CloneSkb, srcMin: s.UDPSrcMin, srcMax: s.UDPSrcMax,
		queueMap: s.HasQueueMap, queueMin: s.QueueMapMin, queueMax: s.QueueMapMax, nodeAlloc: s.NodeAlloc,
	}
}

// into sets the surface in a sender's configuration; a queue map
// replaces the per-thread queues.
func (f surface) into(cfg *lineratev1.SenderConfig) {
	cfg.Burst, cfg.CloneSkb = int32(f.burst), int32(f.cloneSkb)
	cfg.UdpSrcMin, cfg.UdpSrcMax = uint32(f.srcMin), uint32(f.srcMax)
	if f.queueMap {
		lo := uint32(f.queueMin)
		cfg.QueueMapMin, cfg.QueueMapMax, cfg.Queues = &lo, uint32(f.queueMax), nil
	}
	cfg.NodeAlloc = f.nodeAlloc
}
