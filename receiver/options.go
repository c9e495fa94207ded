package receiver

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/linerate/linerate/internal/enum"
	"github.com/linerate/linerate/latency"
	"github.com/linerate/linerate/pktgen"
)

// Method is how a receiver counts, as a run's spec, a campaign spec,
// `linerate recv --method` and an agent's Arm give it. A running receiver
// reports MethodXDP or MethodAFPacket (Report.Method).
type Method string

// Methods a receiver counts with.
const (
	MethodAuto     Method = "auto"     // XDP, else AF_PACKET
	MethodXDP      Method = "xdp"      // an XDP program counts in the kernel
	MethodAFPacket Method = "afpacket" // TPACKET_V3 rings with fanout, counted in Go
	MethodAFXDP    Method = "afxdp"    // an AF_XDP socket per receive queue, counted in Go
)

// Methods lists every valid method, the default first: the one list
// every validator, error and flag help says.
var Methods = []Method{MethodAuto, MethodXDP, MethodAFPacket, MethodAFXDP}

// Check is nil when m is one of Methods; otherwise it names m and the
// valid methods, for the caller to prefix with its field.
func (m Method) Check() error {
	if slices.Contains(Methods, m) {
		return nil
	}
	return fmt.Errorf("%q: valid receiver methods are %s", m, enum.And(Methods))
}

// LatencyMode is whether a receiver times its test packets.
type LatencyMode string

// Latency modes.
const (
	// LatencyOneWay (the default) records every test packet's delay:
	// its arrival time less the send time its header carries, on the
	// clocks Options.Clock states.
	LatencyOneWay LatencyMode = "oneway"
	// LatencyOff records none (the per-packet cost and the histograms'
	// memory are saved).
	LatencyOff LatencyMode = "off"
)

// LatencyModes lists the modes, the default first.
var LatencyModes = []LatencyMode{LatencyOneWay, LatencyOff}

// Check is nil when m is one of LatencyModes.
func (m LatencyMode) Check() error {
	if slices.Contains(LatencyModes, m) {
		return nil
	}
	return fmt.Errorf("%q: valid latency modes are %s", m, enum.And(LatencyModes))
}

// How the xdp method's program is attached (Report.XDPMode).
const (
	XDPNative  = "native"  // in the driver, before an skb exists
	XDPGeneric = "generic" // after the stack has built the skb (SKB mode)
)

// Limits and defaults of Options.
const (
	// DefaultWindow is the sequences per stream the window holds when
	// Options.Window is 0 and Repeats is 1: 2^21 (2 M sequences, 512 KiB
	// per stream; 140 ms of one stream at 14.88 Mpps).
	DefaultWindow = 1 << 21
	// DefaultRepeatWindow is the default with Repeats > 1, where each
	// sequence takes a 16-bit copy counter instead of a bit: 2^17
	// (128 K sequences, 512 KiB per stream).
	DefaultRepeatWindow = 1 << 17
	// MinWindow and MaxWindow bound Options.Window (a power of two).
	// MaxWindow keeps every lap of a 32-bit sequence on the same word of
	// the window, which is how the window unwraps them.
	MinWindow = 1 << 10
	MaxWindow = 1 << 27
	// MaxClockCorrection bounds a clock correction (Options.ClockCorrections):
	// clocks a day apart are not corrected, they are set.
	MaxClockCorrection = 24 * time.Hour
	// MaxStreamsLimit is the largest stream table (MaxStreams).
	MaxStreamsLimit = 1 << 16
	// DefaultMaxStreams is the number of streams counted when
	// Options.MaxStreams is 0.
	DefaultMaxStreams = 32
	// MaxReflectPorts bounds Options.Reflect: a run reflects one latency
	// stream's port per sender.
	MaxReflectPorts = 1024
	// MaxRepeats bounds Options.Repeats (16-bit copy counters).
	MaxRepeats = 32768
	// DefaultMaxRanges is how many missing ranges a stream reports when
	// Options.MaxRanges is 0.
	DefaultMaxRanges = 16
	// MaxRangesLimit bounds Options.MaxRanges: every stream's list of seen
	// runs grows with the loss the data plane shows it (anyone on the
	// data network can forge it) up to MaxRanges + 65 runs, so the bound
	// keeps that memory small beside the window (4,161 runs × 32 bytes,
	// 130 KiB a stream at most) and a report's ranges a few MiB.
	MaxRangesLimit = 1 << 12
	// perCPUStreamBytes bounds the state of one stream on one CPU, apart
	// from its window: the AF_PACKET method's stream entry in each ring's
	// table (the struct, its index slot and its place in the table's list,
	// with the slack of their doubling), the XDP method's per-CPU counters
	// (80 bytes) and run of full words (16 bytes). TestPerCPUStreamBytes
	// checks the struct against it.
	perCPUStreamBytes = 256
	// perStreamBytes bounds a stream's state outside the window and the
	// per-CPU state: the window's struct and map entry.
	perStreamBytes = 256
	// latencyBytes is one stream's delay histogram and its recorder's
	// state on one CPU (ring), when latency is on.
	latencyBytes = latency.Buckets*8 + 128
	// seenRunBytes is one seen run (two uint64) with the slack of the
	// slice's doubling.
	seenRunBytes = 32
	// maxXDPBytes bounds the XDP method's window array (a BPF array map
	// is limited to about 4 GiB).
	maxXDPBytes = 1 << 32
)

// ErrOptions is returned when the options are invalid; the message names
// the field and what would be valid.
var ErrOptions = errors.New("invalid receiver options")

// ErrNoInterface is returned when Options.Iface does not exist in the
// calling thread's network namespace.
var ErrNoInterface = errors.New("no such interface")

// ErrNotSupported is returned when the method cannot run here (other OS,
// kernel too old, driver refuses).
var ErrNotSupported = errors.New("not supported")

// Options configure a Receiver. The zero value of every field but Iface
// is a sensible default.
type Options struct {
	// Iface is the interface to count on, in the network namespace of the
	// thread that calls Start.
	Iface string
	// Method is MethodAuto (default), MethodXDP or MethodAFPacket.
	Method Method
	// Pass lets test packets continue to the network stack after they
	// are counted (XDP_PASS). By default the XDP method drops them
	// (XDP_DROP: the receiver is a sink). Packets without the pktgen
	// magic always pass. AF_PACKET only taps: packets always continue.
	Pass bool
	// Repeats is how many copies of one sequence number are expected:
	// kernel pktgen's clone_skb times its burst (each at least 1; with
	// SeqStride the same). Up to Repeats copies of a sequence are not
	// duplicates. Default 1. The streams to Reflect's ports are counted
	// once per sequence whatever it says.
	Repeats int
	// SeqStride is how far a sender's sequence advances from one frame
	// it builds to the next (a power of two up to MaxRepeats; 0 means 1):
	// kernel pktgen numbers every frame it sends, so a frame sent R times
	// (clone_skb, burst) carries the sequence of its first copy and the
	// next one R more. The receiver counts a wire sequence w as
	// (w + SeqStride - 1) / SeqStride (pktgen's first sequence 1, 1+R,
	// 1+2R, ... as 1, 2, 3, ...), so that a stream's max_seq and missing
	// are in frames built, not frames sent. Default 1.
	SeqStride int
	// Window is how many of a stream's sequences are tracked one by one
	// (a power of two, MinWindow to MaxWindow): the newest Window
	// sequences, roughly, as a ring of 64-bit words (see seqwindow.go).
	// A sequence older than the window is final: a packet that arrives
	// for it is counted late (StreamReport.Late), not as a first copy nor
	// a duplicate, because the window no longer knows which it is.
	// Memory is fixed per stream whatever the run's length: Window/4 bytes
	// (Window×4 with Repeats > 1), for MaxStreams streams; the XDP method
	// allocates it up front, the AF_PACKET method per stream as it
	// appears. Default DefaultWindow (DefaultRepeatWindow with
	// Repeats > 1).
	Window uint64
	// MaxStreams is how many streams are counted; test packets of further
	// streams are counted only in Report.OverflowPackets. Default
	// DefaultMaxStreams.
	MaxStreams int
	// MaxRanges is how many missing ranges each stream lists (the first
	// ones by sequence). Default DefaultMaxRanges.
	MaxRanges int
	// Latency is LatencyOneWay (default) or LatencyOff.
	Latency LatencyMode
	// Clock is what the delays are measured on, as the caller knows it
	// (the receiver sees only its own clock): latency.SameHost when the
	// senders share this host's clock, latency.Unsynchronised (default)
	// when nothing relates them. ClockErrorUs is its bound.
	Clock        latency.Clock
	ClockErrorUs float64
	// ClockCorrections are added to the delays of the streams to each
	// UDP destination port (a run gives each sender its own): the sender's
	// clock less this host's, as someone measured them (at most
	// MaxClockCorrection either way).
	ClockCorrections map[uint16]time.Duration
	// Reflect are UDP destination ports whose test packets are sent back
	// where they came from once counted (a round-trip time's latency
	// stream): Ethernet addresses, IP addresses and UDP ports swapped,
	// XDP_TX out of the interface they arrived on, each counted in its
	// stream's Reflected. Only the XDP method can (Method xdp or auto,
	// which then never falls back to AF_PACKET); at most MaxReflectPorts.
	// A latency stream numbers each frame it sends once (1, 2, 3, ...),
	// whatever the load's copies, so the streams to these ports are
	// counted one copy per sequence, stride 1, not with Repeats and
	// SeqStride: a lost probe is missing and a second copy a duplicate.
	Reflect []uint16
	// ReflectVLAN is the 802.1Q id (1-4094; 0: none) of the run's test
	// frames, put back on a reflection that arrived untagged: a NIC's
	// VLAN offload, or a veth from a bridge, hands XDP the frame without
	// its tag, which XDP_TX would then send back on no VLAN. Only with
	// Reflect.
	ReflectVLAN int
	// NeedWakeup is the afxdp method's need_wakeup policy: auto (default:
	// on for a physical NIC, off for a virtual device, xsk.Virtual), on or
	// off; a kernel that refuses the flag gets the socket without it and
	// a warning. Only the afxdp method takes it.
	NeedWakeup pktgen.NeedWakeup
	// CPUs are the CPUs the afxdp method's readers run on, queue q's on
	// CPUs[q % len(CPUs)]: the CPUs of the queues' IRQs as the run's
	// topology plan pinned them, so that each queue is read where its
	// softirq fills it. Default: the CPUs this process may use, in order.
	CPUs []int
	// Logger receives what the receiver decides (method, mode, fallbacks).
	// Default: no logging.
	Logger hclog.Logger
	// Names are how errors call the options: the Go field names by
	// default, a command's flags when it gives them.
	Names Names
}

// Names are how a caller calls a receiver's inputs in its errors (a
// command: its flags, "--repeats"); an empty name is the Go field's. A
// field the caller names is one it always sets (a flag has a default of
// its own), so its zero is checked as a value rather than taken as the
// default; Window's zero stays the default, which depends on Repeats.
type Names struct {
	Iface, Method, Repeats, SeqStride, Window, MaxStreams, MaxRanges, Latency, Clock, Reflect, NeedWakeup string
	// Duration and UntilIdle name Count's Until.
	Duration, UntilIdle string
}

// orField is name, or field when name is empty, and whether the caller
// named it.
func orField(name, field string) (string, bool) {
	if name == "" {
		return field, false
	}
	return name, true
}

// ValidWindow reports whether w is a window Options takes: a power of
// two from MinWindow to MaxWindow.
func ValidWindow(w uint64) bool {
	return w >= MinWindow && w <= MaxWindow && w&(w-1) == 0
}

// WithDefaults returns o validated, its defaults filled in: the options
// a Receiver runs with (an error names the invalid field and what is
// valid).
func (o Options) WithDefaults() (Options, error) { return o.withDefaults() }

// withDefaults validates o and fills its defaults; errors name the
// fields as o.Names says.
func (o Options) withDefaults() (Options, error) {
	n := o.Names
	method, _ := orField(n.Method, "Method")
	if o.Method == "" {
		o.Method = MethodAuto
	}
	if err := o.Method.Check(); err != nil {
		return o, fmt.Errorf("%w: %s %v", ErrOptions, method, err)
	}
	repeats, given := orField(n.Repeats, "Repeats")
	if o.Repeats == 0 && !given {
		o.Repeats = 1
	}
	if o.Repeats < 1 || o.Repeats > MaxRepeats {
		return o, fmt.Errorf("%w: %s %d: want 1 to %d", ErrOptions, repeats, o.Repeats, MaxRepeats)
	}
	if o.Window == 0 {
		o.Window = DefaultWindow
		if o.Repeats > 1 {
			o.Window = DefaultRepeatWindow
		}
	}
	if !ValidWindow(o.Window) {
		window, _ := orField(n.Window, "Window")
		return o, fmt.Errorf("%w: %s %d: want a power of two from %d to %d sequences", ErrOptions, window, o.Window, MinWindow, MaxWindow)
	}
	if err := o.checkStride(); err != nil {
		return o, err
	}
	streams, given := orField(n.MaxStreams, "MaxStreams")
	if o.MaxStreams == 0 && !given {
		o.MaxStreams = DefaultMaxStreams
	}
	if o.MaxStreams < 1 || o.MaxStreams > MaxStreamsLimit {
		return o, fmt.Errorf("%w: %s %d: want 1 to %d", ErrOptions, streams, o.MaxStreams, MaxStreamsLimit)
	}
	ranges, given := orField(n.MaxRanges, "MaxRanges")
	if o.MaxRanges == 0 && !given {
		o.MaxRanges = DefaultMaxRanges
	}
	if o.MaxRanges < 1 || o.MaxRanges > MaxRangesLimit {
		return o, fmt.Errorf("%w: %s %d: want 1 to %d", ErrOptions, ranges, o.MaxRanges, MaxRangesLimit)
	}
	if o.Latency == "" {
		o.Latency = LatencyOneWay
	}
	if err := o.Latency.Check(); err != nil {
		name, _ := orField(n.Latency, "Latency")
		return o, fmt.Errorf("%w: %s %v", ErrOptions, name, err)
	}
	if o.Clock == "" {
		o.Clock = latency.Unsynchronised
	}
	clock, _ := orField(n.Clock, "Clock")
	if _, err := latency.ParseClock(clock, string(o.Clock)); err != nil {
		return o, fmt.Errorf("%w: %v", ErrOptions, err)
	}
	for port, c := range o.ClockCorrections {
		if c < -MaxClockCorrection || c > MaxClockCorrection {
			return o, fmt.Errorf("%w: ClockCorrections[port %d] %v: want at most %v either way", ErrOptions, port, c, MaxClockCorrection)
		}
	}
	// need_wakeup and the reader CPUs are the afxdp method's: asked of
	// another, they would be taken and ignored.
	if err := o.NeedWakeup.CheckFor(o.Method == MethodAFXDP, "method "+string(o.Method)); err != nil {
		name, _ := orField(n.NeedWakeup, "NeedWakeup")
		return o, fmt.Errorf("%w: %s %v", ErrOptions, name, err)
	}
	if o.NeedWakeup == "" {
		o.NeedWakeup = pktgen.NeedWakeupAuto
	}
	if o.Method != MethodAFXDP {
		if len(o.CPUs) > 0 {
			return o, fmt.Errorf("%w: CPUs %v: the afxdp method's reader CPUs; method %s places its own: want --method %s, or none", ErrOptions, o.CPUs, o.Method, MethodAFXDP)
		}
	}
	for i, c := range o.CPUs {
		if c < 0 {
			return o, fmt.Errorf("%w: CPUs[%d] %d: want a CPU number, 0 or more", ErrOptions, i, c)
		}
	}
	if err := o.checkReflect(); err != nil {
		return o, err
	}
	if o.Logger == nil {
		o.Logger = hclog.NewNullLogger()
	}
	return o, nil
}

// checkReflect refuses reflection the method cannot do (AF_PACKET only
// taps: it cannot send a frame back in the kernel) and port lists past
// MaxReflectPorts or naming port 0.
func (o Options) checkReflect() error {
	if o.ReflectVLAN < 0 || o.ReflectVLAN > 4094 || o.ReflectVLAN > 0 && len(o.Reflect) == 0 {
		return fmt.Errorf("%w: ReflectVLAN %d: want a VLAN id 1-4094 with Reflect ports, or 0", ErrOptions, o.ReflectVLAN)
	}
	if len(o.Reflect) == 0 {
		return nil
	}
	name, _ := orField(o.Names.Reflect, "Reflect")
	if o.Method == MethodAFPacket || o.Method == MethodAFXDP {
		method, _ := orField(o.Names.Method, "Method")
		return fmt.Errorf("%w: %s with %s %s: only the %s method can reflect (XDP_TX); give %s %s or %s",
			ErrOptions, name, method, o.Method, MethodXDP, method, MethodXDP, MethodAuto)
	}
	if len(o.Reflect) > MaxReflectPorts {
		return fmt.Errorf("%w: %s: %d ports, want at most %d", ErrOptions, name, len(o.Reflect), MaxReflectPorts)
	}
	if slices.Contains(o.Reflect, 0) {
		return fmt.Errorf("%w: %s: port 0: want UDP ports 1 to 65535", ErrOptions, name)
	}
	return nil
}

// checkStride refuses a SeqStride that is not a power of two up to
// MaxRepeats, or one whose shorter counted sequences (32 - log2 bits)
// could not place a window this wide on its lap (geometry.unwrap: the
// head lags the stream by up to the window plus headStep words, which
// must stay within half the words a counted sequence tells apart).
func (o *Options) checkStride() error {
	if o.SeqStride == 0 {
		o.SeqStride = 1
	}
	name, _ := orField(o.Names.SeqStride, "SeqStride")
	if o.SeqStride < 1 || o.SeqStride > MaxRepeats || o.SeqStride&(o.SeqStride-1) != 0 {
		return fmt.Errorf("%w: %s %d: want a power of two from 1 to %d", ErrOptions, name, o.SeqStride, MaxRepeats)
	}
	if StrideWindow(o.Repeats, o.SeqStride) == 0 {
		most := o.SeqStride
		for most > 1 && StrideWindow(o.Repeats, most) == 0 {
			most >>= 1
		}
		return fmt.Errorf("%w: %s %d: the stride leaves too few bits of sequence for any window: want at most %d", ErrOptions, name, o.SeqStride, most)
	}
	if top := StrideWindow(o.Repeats, o.SeqStride); o.Window > top {
		return fmt.Errorf("%w: %s %d with a window of %d sequences: the stride leaves %d bits of sequence: want a window of at most %d, or a smaller stride",
			ErrOptions, name, o.SeqStride, o.Window, 32-newGeometry(o.Window, o.Repeats).withStride(o.SeqStride).stride, top)
	}
	return nil
}

// StrideWindow is the widest window (at most MaxWindow; 0: none fits)
// whose streams a receiver can still place on their lap with sequences
// of stride (Options.SeqStride) and repeats copies each.
func StrideWindow(repeats, stride int) uint64 {
	for w := uint64(MaxWindow); w >= MinWindow; w >>= 1 {
		g := newGeometry(w, repeats).withStride(stride)
		if g.words()+headStep < 1<<(g.wireBits()-1) {
			return w
		}
	}
	return 0
}

// SeqStateBytes is the memory the sequence windows of o take at most,
// its defaults filled: MaxStreams × Window/32 64-bit words (Window/2 with
// Repeats > 1), whatever the run's length. The XDP method allocates it up
// front, in one array all CPUs share; the AF_PACKET method one window per
// stream as streams appear, shared by its rings. It is what an agent's
// receiver memory budget is checked against; the per-stream counters
// (80 bytes per CPU), the XDP method's stream heads (8 bytes per stream),
// runs of full words (16 bytes per stream per CPU) and 8 MiB eviction
// ring, the lists of seen runs (up to (MaxRanges+65) × 16 bytes per
// stream, only as long as its loss makes them) and the rings are apart
// from it; MemoryBytes counts them too.
func (o Options) SeqStateBytes() (uint64, error) {
	o, err := o.withDefaults()
	if err != nil {
		return 0, err
	}
	return uint64(o.MaxStreams) * newGeometry(o.Window, o.Repeats).bytes(), nil
}

// MemoryBytes is the most memory the receiver's per-stream state takes on
// a host with cpus CPUs, its defaults filled, whichever method counts
// (AF_PACKET's rings, one per CPU, or XDP's per-CPU maps) and whatever the
// data plane sends: SeqStateBytes, plus for each of MaxStreams streams its
// list of seen runs at its bound, its window's bookkeeping and its state
// on every CPU. Nothing of it grows on packet arrival beyond this: a
// stream beyond MaxStreams is only counted in Report.OverflowPackets, a
// sequence (forged or not) only moves a stream's fixed window. It is what
// an agent's receiver memory budget is checked against. The rings' and
// the XDP eviction ring's buffers are apart from it (fixed per CPU).
func (o Options) MemoryBytes(cpus int) (uint64, error) {
	o, err := o.withDefaults()
	if err != nil {
		return 0, err
	}
	seq := uint64(o.MaxStreams) * newGeometry(o.Window, o.Repeats).bytes()
	runs := uint64(newRangeList(o.MaxRanges).limit) * seenRunBytes
	perCPU := uint64(perCPUStreamBytes + spreadBytes)
	if o.Latency == LatencyOneWay {
		perCPU += latencyBytes
	}
	per := runs + perStreamBytes + uint64(max(cpus, 1))*perCPU
	return seq + uint64(o.MaxStreams)*per, nil
}
