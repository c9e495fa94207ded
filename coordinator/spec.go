package coordinator

import (
	"fmt"
	"time"

	"github.com/linerate/linerate/pktgen"
	recv "github.com/linerate/linerate/receiver"
	"github.com/linerate/linerate/topology"
)

// Spec is one run: who sends to whom, what, and for how long.
type Spec struct {
	Senders, Receivers []string // agent (serf node) names
	Pattern            Pattern  // Pairwise (default), FanIn, FanOut, Mesh
	FrameSize          int      // Ethernet frame including FCS (RFC 2544), default 64
	// IMIX, when set, replaces FrameSize with an internet mix (frame sizes
	// including FCS and weights; pktgen's imix_weights: kernel backend).
	IMIX     pktgen.IMIX
	Duration time.Duration
	Count    uint64             // packets per flow; 0 with a duration
	Rate     uint64             // packets per second per flow; 0 = as fast as the sender goes
	Threads  int                // sender threads per flow (0: every tuned queue, at least 1)
	Backend  pktgen.BackendName // sender backend: pktgen.BackendAuto (default) or another of pktgen.BackendNames
	// XmitMode is how kernel pktgen hands its frames to the device:
	// pktgen.XmitStart (default, "": past the qdisc) or XmitQueue
	// (through it: a qdisc on the senders' interface, such as the VM
	// lab's netem delay, then acts on every frame). Userspace backends
	// transmit as start_xmit does.
	XmitMode pktgen.XmitMode
	// NeedWakeup is the AF_XDP sockets' need_wakeup policy, of the afxdp
	// backend and the afxdp receiver method alike: pktgen.NeedWakeupAuto
	// (default, "": on for a physical NIC, off for a virtual device), On
	// or Off; on and off only with backend or method afxdp (each end
	// without AF_XDP sockets is given auto).
	NeedWakeup    pktgen.NeedWakeup
	Method        recv.Method // receiver method: receiver.MethodAuto (default) or another of receiver.Methods
	Drain         time.Duration
	LeaseTTL      time.Duration
	StartLead     time.Duration       // how far ahead the common start instant is set (default: from RTTs)
	KeepTuning    bool                // leave the IRQ affinities applied after the run
	NoTune        bool                // do not touch IRQ affinities
	IRQBalance    topology.IRQBalance // topology.IRQBalanceRefuse (default) or IRQBalanceIgnore
	WatchInterval time.Duration
	BasePort      int // UDP destination port of the first sending host's flows; the i-th sending host's BasePort+i (default 10000)
	// Bidir makes every pair of the pattern send both ways at once, each
	// host a sender and a receiver (role both); Reverse turns every pair
	// round, the named receivers sending to the named senders. Either
	// marks each flow with its Direction (direction.go).
	Bidir, Reverse bool
	// Latency is what the run times: LatencyOneWay (default), LatencyRTT
	// (round trips too, by a latency stream of RTTRate packets a second
	// per flow, 0: latency.DefaultRTTRate) or LatencyOff.
	Latency LatencyMode
	RTTRate uint64
	// Preflight is what the run does with the hosts' checks:
	// PreflightWarn (default), PreflightStrict or PreflightFix.
	Preflight Preflight

	// Kernel pktgen's surface beyond one frame per packet (surface.go):
	// Burst and CloneSkb repeat each sequence number on purpose (the
	// receivers count the run with repeats: Copies), UDPSrcMin to
	// UDPSrcMax is the source port range every stream walks (so that a
	// receiver's RSS spreads it over its queues), QueueMapMin to
	// QueueMapMax (with HasQueueMap) the TX queue range every thread
	// sends on in turn, NodeAlloc allocates the frames on the NUMA node
	// of each sender's NIC.
	Burst, CloneSkb          int
	UDPSrcMin, UDPSrcMax     int
	QueueMapMin, QueueMapMax int
	HasQueueMap, NodeAlloc   bool
	// IPv6 sends every flow to its receiver's IPv6 data address (the
	// first global or unique-local one its Describe names, never a
	// link-local one), from the sender's own; without it, to its IPv4
	// one (family.go).
	IPv6 bool
	// VLAN, when set (1-4094), tags every test frame with this 802.1Q
	// VLAN id: the sender agents must allow it (--allow-vlan). 0 sends
	// untagged.
	VLAN int
}

// Defaults for a Spec's zero fields.
const (
	DefaultFrameSize = 64
	DefaultDrain     = time.Second
	DefaultLeaseTTL  = 15 * time.Second
	DefaultBasePort  = 10000
	maxDuration      = 24 * time.Hour
)

// Limits of a Spec's fields, a campaign spec's too.
const (
	// MaxThreads bounds the sender threads per flow.
	MaxThreads = 1024
)

// Validate fills defaults and names the first bad field with what would be
// valid, the pairing of senders and receivers by the pattern included.
func (s *Spec) Validate() error {
	if s.Pattern == "" {
		s.Pattern = Pairwise
	}
	if err := s.Pattern.Check(); err != nil {
		return fmt.Errorf("pattern %w", err)
	}
	if len(s.Senders) == 0 {
		return fmt.Errorf("senders: none named: give at least one sender agent")
	}
	if len(s.Receivers) == 0 {
		return fmt.Errorf("receivers: none named: give at least one receiver agent")
	}
	if _, err := Pairs(s.Pattern, s.Senders, s.Receivers); err != nil {
		return err
	}
	if err := s.checkDirections(); err != nil {
		return err
	}
	if err := s.CheckVLAN(); err != nil {
		return err
	}
	if s.FrameSize == 0 {
		s.FrameSize = s.MinFrameSize()
	}
	if len(s.IMIX) > pktgen.MaxIMIX {
		return fmt.Errorf("imix: %d sizes: pktgen takes at most %d", len(s.IMIX), pktgen.MaxIMIX)
	}
	for _, e := range s.IMIX {
		if err := e.Check(); err != nil {
			return fmt.Errorf("imix entry %d:%d: %w", e.Size, e.Weight, err)
		}
		if err := s.CheckFrameSize(e.Size); err != nil {
			return fmt.Errorf("imix entry %d:%d: %w", e.Size, e.Weight, err)
		}
	}
	if err := s.CheckFrameSize(s.FrameSize); err != nil {
		return err
	}
	switch {
	case s.Duration == 0 && s.Count == 0:
		return fmt.Errorf("neither a duration nor a count: give one (e.g. --duration 10s or --count 1000000)")
	case s.Duration != 0 && s.Count != 0:
		return fmt.Errorf("both a duration (%s) and a count (%d): give one", s.Duration, s.Count)
	case s.Duration < 0 || s.Duration > maxDuration:
		return fmt.Errorf("duration %s: want more than 0 and at most %s", s.Duration, maxDuration)
	}
	if s.Threads < 0 || s.Threads > MaxThreads {
		return fmt.Errorf("threads %d: want 0 (one per tuned queue) to %d", s.Threads, MaxThreads)
	}
	if s.Count > 0 && s.Threads > 0 && s.Count < uint64(s.Threads) {
		// A thread given no packet would send until stopped.
		return fmt.Errorf("count %d: fewer packets than the %d threads per flow: want at least %d (one per thread) or fewer threads", s.Count, s.Threads, s.Threads)
	}
	if err := CheckRate(s.Rate, s.Threads); err != nil {
		return err
	}
	if s.Backend == "" {
		s.Backend = pktgen.BackendAuto
	}
	if err := s.Backend.Check(); err != nil {
		return fmt.Errorf("backend %w", err)
	}
	if err := s.CheckSurface(); err != nil {
		return err
	}
	if err := s.checkNeedWakeup(); err != nil {
		return err
	}
	if s.Method == "" {
		s.Method = recv.MethodAuto
	}
	if err := s.Method.Check(); err != nil {
		return fmt.Errorf("method %w", err)
	}
	if s.IRQBalance != "" {
		if err := s.IRQBalance.Check(); err != nil {
			return fmt.Errorf("irqbalance %w", err)
		}
	}
	if s.Drain == 0 {
		s.Drain = DefaultDrain
	}
	if s.Drain < 0 || s.Drain > time.Minute {
		return fmt.Errorf("drain %s: want 0 to 1m", s.Drain)
	}
	if s.LeaseTTL == 0 {
		s.LeaseTTL = DefaultLeaseTTL
	}
	if s.LeaseTTL < 3*time.Second || s.LeaseTTL > 10*time.Minute {
		return fmt.Errorf("lease TTL %s: want 3s to 10m", s.LeaseTTL)
	}
	if s.StartLead < 0 || s.StartLead > time.Minute {
		return fmt.Errorf("start lead %s: want 0 (automatic) to 1m", s.StartLead)
	}
	if s.WatchInterval == 0 {
		s.WatchInterval = time.Second
	}
	if s.BasePort == 0 {
		s.BasePort = DefaultBasePort
	}
	if s.BasePort < 1 || s.BasePort > 65535 {
		return fmt.Errorf("base port %d: want 1-65535", s.BasePort)
	}
	if err := s.checkPreflight(); err != nil {
		return err
	}
	return s.checkLatency()
}

// checkXmitMode refuses an xmit mode pktgen does not have, and any but
// start_xmit for a userspace backend (they transmit on the device). The
// default, "", is start_xmit. netif_receive would inject the frames
// into the sender's own receive path: they would never reach a
// receiver.
func (s *Spec) checkXmitMode() error {
	switch s.XmitMode {
	case "", pktgen.XmitStart:
		return nil
	case pktgen.XmitQueue:
		if s.Backend != "" && s.Backend != pktgen.BackendAuto && s.Backend != pktgen.BackendKernel {
			return fmt.Errorf("xmit mode %s: kernel pktgen only (backend %s or %s); backend %s transmits on the device as %s does", s.XmitMode, pktgen.BackendKernel, pktgen.BackendAuto, s.Backend, pktgen.XmitStart)
		}
		return nil
	}
	return fmt.Errorf("xmit mode %q: want %s or %s (%s injects into the sender's own receive path: nothing would reach a receiver)", s.XmitMode, pktgen.XmitStart, pktgen.XmitQueue, pktgen.XmitNetifReceive)
}

// checkNeedWakeup refuses a need_wakeup policy that is none of
// pktgen.NeedWakeups, and on or off where neither end has AF_XDP
// sockets (only they have the flag).
func (s *Spec) checkNeedWakeup() error {
	if err := s.NeedWakeup.CheckFor(s.Backend == pktgen.BackendAFXDP || s.Method == recv.MethodAFXDP, fmt.Sprintf("backend %s with method %s", orAuto(string(s.Backend)), orAuto(string(s.Method)))); err != nil {
		return fmt.Errorf("need wakeup %w", err)
	}
	return nil
}

// orAuto is name, or "auto" when empty (a spec's default engine).
func orAuto(name string) string {
	if name == "" {
		return "auto"
	}
	return name
}

// senderWakeup is the need_wakeup policy the senders are given: the
// spec's with the afxdp backend, auto with any other.
func (s *Spec) senderWakeup() pktgen.NeedWakeup {
	if s.Backend == pktgen.BackendAFXDP {
		return s.NeedWakeup
	}
	return ""
}

// receiverWakeup is the one the receivers are armed with: the spec's
// with the afxdp method, auto with any other.
func (s *Spec) receiverWakeup() pktgen.NeedWakeup {
	if s.Method == recv.MethodAFXDP {
		return s.NeedWakeup
	}
	return ""
}

// CheckRate refuses a paced flow of rate packets per second split over
// threads threads (0: automatic, at least 1) that would leave a thread
// less than 1 pps: pktgen reads a rate of 0 as no pacing at all. rate 0
// is unpaced, as fast as the senders go.
func CheckRate(rate uint64, threads int) error {
	if rate > 0 && rate < uint64(max(threads, 1)) {
		plural := "s"
		if rate == 1 {
			plural = ""
		}
		return fmt.Errorf("rate %d pps per flow over %d threads: below 1 pps per thread: want a rate of at least %d pps or at most %d thread%s", rate, threads, threads, rate, plural)
	}
	return nil
}

// MeanFrame is the mean frame size without FCS the run sends: the imix's
// (pktgen.IMIX.FrameBytes, as the senders' own summaries count it), or
// FrameSize without its FCS.
func (s *Spec) MeanFrame() float64 {
	if len(s.IMIX) > 0 {
		return s.IMIX.FrameBytes()
	}
	return float64(s.FrameSize - pktgen.FCSBytes)
}
