package receiver

import (
	"errors"
	"fmt"

	"github.com/hashicorp/go-hclog"
)

// Methods a receiver counts with.
const (
	MethodAuto     = "auto"     // XDP, else AF_PACKET
	MethodXDP      = "xdp"      // an XDP program counts in the kernel
	MethodAFPacket = "afpacket" // TPACKET_V3 rings with fanout, counted in Go
)

// Limits and defaults of Options.
const (
	// DefaultSeqCapacity is the highest sequence tracked exactly per
	// stream when Options.SeqCapacity is 0 and Repeats is 1: 2^26
	// (67 M packets, 8 MiB of bitmap per stream).
	DefaultSeqCapacity = 1 << 26
	// DefaultRepeatSeqCapacity is the default with Repeats > 1, where each
	// sequence takes a 16-bit copy counter instead of a bit: 2^22
	// (4 M distinct sequences, 8 MiB per stream).
	DefaultRepeatSeqCapacity = 1 << 22
	// MaxStreamsLimit is the largest stream table (MaxStreams).
	MaxStreamsLimit = 1 << 16
	// MaxSeqCapacity is the largest SeqCapacity: sequences are 32-bit.
	MaxSeqCapacity = 1<<32 - 1
	// DefaultMaxStreams is the number of streams counted when
	// Options.MaxStreams is 0.
	DefaultMaxStreams = 32
	// MaxRepeats bounds Options.Repeats (16-bit copy counters, with
	// headroom for CPUs racing on one sequence).
	MaxRepeats = 32768
	// DefaultMaxRanges is how many missing ranges a stream reports when
	// Options.MaxRanges is 0.
	DefaultMaxRanges = 16
	// maxXDPBytes bounds the XDP method's sequence array (a BPF array map
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
	Method string
	// Pass lets test packets continue to the network stack after they
	// are counted (XDP_PASS). By default the XDP method drops them
	// (XDP_DROP: the receiver is a sink). Packets without the pktgen
	// magic always pass. AF_PACKET only taps: packets always continue.
	Pass bool
	// Repeats is how many copies of one sequence number are expected:
	// pktgen's clone_skb+1, or its burst. Up to Repeats copies of a
	// sequence are not duplicates. Default 1.
	Repeats int
	// SeqCapacity is the highest sequence number tracked exactly per
	// stream. Memory is 1 bit per sequence (16 bits with Repeats > 1) per
	// stream: allocated as sequences arrive by the AF_PACKET method, and
	// up front (MaxStreams × SeqCapacity) by the XDP method. Packets with
	// a sequence above it (or 0) are counted in received and in the
	// stream's beyond_capacity, and take no part in duplicate, reorder or
	// missing accounting. Default DefaultSeqCapacity
	// (DefaultRepeatSeqCapacity with Repeats > 1).
	SeqCapacity uint64
	// MaxStreams is how many streams are counted; test packets of further
	// streams are counted only in Report.OverflowPackets. Default
	// DefaultMaxStreams.
	MaxStreams int
	// MaxRanges is how many missing ranges each stream lists (the first
	// ones by sequence). Default DefaultMaxRanges.
	MaxRanges int
	// Logger receives what the receiver decides (method, mode, fallbacks).
	// Default: no logging.
	Logger hclog.Logger
}

// withDefaults validates o and fills its defaults.
func (o Options) withDefaults() (Options, error) {
	switch o.Method {
	case "":
		o.Method = MethodAuto
	case MethodAuto, MethodXDP, MethodAFPacket:
	default:
		return o, fmt.Errorf("%w: Method %q (valid: auto, xdp, afpacket)", ErrOptions, o.Method)
	}
	if o.Repeats == 0 {
		o.Repeats = 1
	}
	if o.Repeats < 1 || o.Repeats > MaxRepeats {
		return o, fmt.Errorf("%w: Repeats %d (valid: 1 to %d)", ErrOptions, o.Repeats, MaxRepeats)
	}
	if o.SeqCapacity == 0 {
		o.SeqCapacity = DefaultSeqCapacity
		if o.Repeats > 1 {
			o.SeqCapacity = DefaultRepeatSeqCapacity
		}
	}
	if o.SeqCapacity > MaxSeqCapacity {
		return o, fmt.Errorf("%w: SeqCapacity %d (valid: 1 to %d, sequences are 32-bit)", ErrOptions, o.SeqCapacity, uint64(MaxSeqCapacity))
	}
	if o.MaxStreams == 0 {
		o.MaxStreams = DefaultMaxStreams
	}
	if o.MaxStreams < 1 || o.MaxStreams > MaxStreamsLimit {
		return o, fmt.Errorf("%w: MaxStreams %d (valid: 1 to %d)", ErrOptions, o.MaxStreams, MaxStreamsLimit)
	}
	if o.MaxRanges == 0 {
		o.MaxRanges = DefaultMaxRanges
	}
	if o.MaxRanges < 0 {
		return o, fmt.Errorf("%w: MaxRanges %d (valid: 1 or more)", ErrOptions, o.MaxRanges)
	}
	if o.Logger == nil {
		o.Logger = hclog.NewNullLogger()
	}
	return o, nil
}

// wordsPerSlot is how many 64-bit words hold one stream's sequences
// [0, capacity]: 64 bits per word, or 4 16-bit copy counters with repeats.
func wordsPerSlot(capacity uint64, repeats int) uint64 {
	if repeats > 1 {
		return capacity/4 + 1
	}
	return capacity/64 + 1
}

// SeqStateBytes is the memory the sequence state of o takes at most, its
// defaults filled: MaxStreams × (SeqCapacity/64 + 1) 64-bit words
// (SeqCapacity/4 + 1 with Repeats > 1). The XDP method allocates it up
// front, in one array all CPUs share; the AF_PACKET method as sequences
// arrive, per ring (a stream whose packets spread over k rings takes up
// to k times its share). It is what an agent's receiver memory budget is
// checked against; the per-stream counters (40 bytes per CPU with XDP)
// and the rings are apart from it.
func (o Options) SeqStateBytes() (uint64, error) {
	o, err := o.withDefaults()
	if err != nil {
		return 0, err
	}
	return uint64(o.MaxStreams) * wordsPerSlot(o.SeqCapacity, o.Repeats) * 8, nil
}
