package coordinator

import (
	"context"
	"fmt"
	"net/netip"
	"slices"

	"github.com/linerate/linerate/internal/enum"
	"github.com/linerate/linerate/latency"
	lineratev1 "github.com/linerate/linerate/proto/linerate/v1"
	recv "github.com/linerate/linerate/receiver"
)

// LatencyMode is what a run times, as a run's spec and --latency give it.
type LatencyMode string

// Latency modes of a run.
const (
	// LatencyOneWay (the default): every test packet's delay at its
	// receiver, on the clocks the run states.
	LatencyOneWay LatencyMode = "oneway"
	// LatencyRTT: one-way as well, and round trips without any clock
	// sync: each sender sends a latency stream to each of its receivers
	// beside the load (Spec.RTTRate), the receivers reflect it (XDP_TX)
	// and the sender times its return on its own clock.
	LatencyRTT LatencyMode = "rtt"
	// LatencyOff: no timing at all.
	LatencyOff LatencyMode = "off"
)

// LatencyModes lists the modes, the default first: the one list every
// validator, error and flag help says.
var LatencyModes = []LatencyMode{LatencyOneWay, LatencyRTT, LatencyOff}

// Check is nil when m is one of LatencyModes; otherwise it names m and
// the valid modes, for the caller to prefix with its field.
func (m LatencyMode) Check() error {
	if slices.Contains(LatencyModes, m) {
		return nil
	}
	return fmt.Errorf("%q: valid latency modes are %s", m, enum.And(LatencyModes))
}

// checkLatency fills the latency mode's defaults and refuses what cannot
// run: a round trip needs receivers that reflect (the xdp method: XDP_TX,
// which AF_PACKET cannot), a latency stream's rate within bounds, and a
// port for each sender's latency stream after the load's.
func (s *Spec) checkLatency() error {
	if s.Latency == "" {
		s.Latency = LatencyOneWay
	}
	if err := s.Latency.Check(); err != nil {
		return fmt.Errorf("latency %w", err)
	}
	if s.RTTRate > latency.MaxRTTRate {
		return fmt.Errorf("rtt rate %d pps: want 1 to %d (0: %d)", s.RTTRate, latency.MaxRTTRate, latency.DefaultRTTRate)
	}
	if s.Latency != LatencyRTT {
		return nil
	}
	if s.RTTRate == 0 {
		s.RTTRate = latency.DefaultRTTRate
	}
	if s.Method == recv.MethodAFPacket || s.Method == recv.MethodAFXDP {
		return fmt.Errorf("latency %s with receiver method %s: receivers reflect the latency stream with XDP_TX, which the %s method cannot: give method %s or %s, or latency %s",
			LatencyRTT, s.Method, s.Method, recv.MethodXDP, recv.MethodAuto, LatencyOneWay)
	}
	if s.Bidir {
		return fmt.Errorf("latency %s with bidir: a host that sends and receives would need two XDP programs on its interface, the receiver's and the one that times the returns: run latency %s both ways, or latency %s one way (or with reverse)",
			LatencyRTT, LatencyOneWay, LatencyRTT)
	}
	n := len(s.Senders)
	if s.Reverse {
		n = len(s.Receivers) // the named receivers send
	}
	if last := s.BasePort + 2*n - 1; last > 65535 {
		return fmt.Errorf("base port %d: latency %s takes ports %d to %d (the load's, then each sending host's latency stream): want a base port of at most %d",
			s.BasePort, LatencyRTT, s.BasePort, last, 65536-2*n)
	}
	return nil
}

// rttPortOf is the UDP port of a sending host's latency stream, from and
// to: after every sending host's load port (portOf), so that no load
// stream is one.
func (st *runState) rttPortOf(sender string) int {
	sending := st.sending()
	return st.spec.BasePort + len(sending) + slices.Index(sending, sender)
}

// reflectPorts are the latency streams' ports receiver n reflects: those
// of the senders that send to it (none unless latency rtt).
func (st *runState) reflectPorts(n *node) []uint32 {
	if st.spec.Latency != LatencyRTT {
		return nil
	}
	var out []uint32
	for _, p := range st.pairs {
		if port := uint32(st.rttPortOf(p.Sender)); p.Receiver == n.m.Name && !slices.Contains(out, port) {
			out = append(out, port)
		}
	}
	return out
}

// rttStream is sender n's latency stream (nil unless latency rtt).
func (st *runState) rttStream(n *node) *lineratev1.RttStream {
	if st.spec.Latency != LatencyRTT {
		return nil
	}
	return &lineratev1.RttStream{Port: uint32(st.rttPortOf(n.m.Name)), RatePps: st.spec.RTTRate}
}

// receiverLatency is the latency mode receivers are armed with: the
// run's, round trips timing one way as well.
func (st *runState) receiverLatency() recv.LatencyMode {
	if st.spec.Latency == LatencyOff {
		return recv.LatencyOff
	}
	return recv.LatencyOneWay
}

// senderRTT is one latency stream as its sender reported it: sent to
// Dst, what came back (Returned, its latency the round trips) and the
// lowest round trip of each second.
type senderRTT struct {
	Dst      netip.Addr
	Port     uint16
	Sent     uint64
	Returned recv.StreamReport
	LowestUs []uint64
}

// RTT is a flow's round trips (latency rtt): its latency stream's counts
// at each end, both ways, and the round trips of what came back.
type RTT struct {
	// Port is the latency stream's UDP port (from and to).
	Port uint16 `json:"port"`
	// Sent by the sender; Received and Reflected by the receiver;
	// Returned to the sender. LostOut (sent − received) were lost on the
	// way to the receiver, LostBack (reflected − returned) on the way
	// back.
	Sent      uint64 `json:"sent"`
	Received  uint64 `json:"received"`
	Reflected uint64 `json:"reflected"`
	Returned  uint64 `json:"returned"`
	LostOut   uint64 `json:"lost_out"`
	LostBack  uint64 `json:"lost_back"`
	// MaxSeq is the highest probe the receiver counted and MissingRanges
	// its first ranges of probes missing below it (receiver.StreamReport):
	// which probes were lost on the way there. The latency stream numbers
	// each probe once, 1, 2, 3, ..., and the receiver counts it so whatever
	// the load's copies (receiver.Options.Reflect): MaxSeq is Sent when
	// the last probe arrived.
	MaxSeq        uint64      `json:"max_seq"`
	MissingRanges [][2]uint64 `json:"missing_ranges"`
	// Latency is the round trips of the returned frames, on the sender's
	// own clock (same-host).
	Latency *latency.Latency `json:"latency,omitempty"`
	// Lowest is the lowest round trip of each second and their median
	// and least.
	Lowest *latency.Lowest `json:"lowest_per_second,omitempty"`
}

// rttOf is a flow's round trips from its sender's report of its latency
// stream to the flow's receiver (at dst) and the receiver's count of that
// stream (port: the sender's latency port); nil when the sender reported
// none to dst.
func rttOf(sent []senderRTT, rcv *recv.Report, dst netip.Addr, port uint16) *RTT {
	i := slices.IndexFunc(sent, func(s senderRTT) bool { return s.Dst == dst && s.Port == port })
	if i < 0 {
		return nil
	}
	s := sent[i]
	r := &RTT{Port: port, Sent: s.Sent, Returned: s.Returned.Received - min(s.Returned.Duplicates, s.Returned.Received),
		Latency: s.Returned.Latency, Lowest: latency.NewLowest(s.LowestUs), MissingRanges: [][2]uint64{}}
	if rcv != nil {
		for _, rs := range rcv.Streams {
			if rs.DstPort == port && rs.Dst == dst {
				r.Received += rs.Received - min(rs.Duplicates, rs.Received)
				r.Reflected += rs.Reflected
				r.MaxSeq = max(r.MaxSeq, rs.MaxSeq)
				r.MissingRanges = append(r.MissingRanges, rs.MissingRanges...)
			}
		}
	}
	r.LostOut = r.Sent - min(r.Received, r.Sent)
	r.LostBack = r.Reflected - min(r.Returned, r.Reflected)
	return r
}

// attachRTT gives every flow its round trips (latency rtt): rttOf its
// sender's latency streams and its receiver's report.
func (st *runState) attachRTT(flows []Flow) {
	if st.spec.Latency != LatencyRTT {
		return
	}
	for i := range flows {
		s, r := st.nodes[flows[i].Sender], st.nodes[flows[i].Receiver]
		if s == nil || r == nil {
			continue
		}
		rtt := rttOf(s.rtt, r.received, r.dst, uint16(st.rttPortOf(s.m.Name)))
		switch {
		case rtt == nil:
			st.res.Warnings = append(st.res.Warnings, fmt.Sprintf("flow %s → %s: no round trips: the sender reported no latency stream to %s (its warnings say why)", s.m.Name, r.m.Name, r.dst))
		case rtt.Received > 0 && rtt.Reflected == 0:
			st.res.Warnings = append(st.res.Warnings, fmt.Sprintf("flow %s → %s: no round trips: %s received %d frames of the latency stream and reflected none (an agent that predates --latency rtt?)", s.m.Name, r.m.Name, r.m.Name, rtt.Received))
		}
		flows[i].RTT = rtt
	}
}

// checkRTT refuses, before anything is leased, a sender whose latency
// streams cannot all run: the agent sends one to each of its receivers,
// each on a CPU of its own among the load's (agent/rtt.go), so a sender
// with more receivers than CPUs on its NIC's node would fail only at
// Configure, after its hosts were leased and tuned.
func (st *runState) checkRTT(_ context.Context, n *node) error {
	if st.spec.Latency != LatencyRTT {
		return nil
	}
	var dsts []string
	for _, i := range st.flowsOf(n) {
		if r := st.pairs[i].Receiver; !slices.Contains(dsts, r) {
			dsts = append(dsts, r)
		}
	}
	if cpus := len(n.nic.localCPUs); len(dsts) > cpus {
		return fmt.Errorf("latency %s: %s sends to %d receivers and has %d CPUs on its NIC's node: a latency stream to each takes a CPU of its own: give it at most %d receivers (pattern, receivers), or latency %s",
			LatencyRTT, n.m.Name, len(dsts), cpus, cpus, LatencyOneWay)
	}
	return nil
}
