package xsk

import (
	"errors"
	"fmt"

	"github.com/linerate/linerate/internal/enum"
)

// Defaults of Options; see the package doc for why.
const (
	DefaultFrameSize = 2048
	DefaultRingSize  = 2048
	// MaxFrameSize is the largest aligned chunk: a page on the machines
	// linerate runs on.
	MaxFrameSize = 4096
	// Headroom is the kernel's XDP_PACKET_HEADROOM, which a received
	// frame's chunk starts with: a chunk of n bytes holds frames of up
	// to n - Headroom.
	Headroom = 256
	// MaxRingSize bounds a ring (the kernel takes more; nothing here
	// needs it).
	MaxRingSize = 1 << 16
	// MaxFrames bounds the UMEM (1 GiB at 4096-byte frames).
	MaxFrames = 1 << 18
)

// Mode is how the socket's frames reach the driver: ModeAuto (""),
// ModeCopy or ModeZeroCopy.
type Mode string

// Modes. Copy mode copies every frame between the UMEM and an skb
// (XDP_COPY), which every driver can; zero-copy hands the UMEM's frames
// to the driver's rings (XDP_ZEROCOPY), which only drivers with AF_XDP
// support can; auto is zero-copy when the driver binds it, else copy.
const (
	ModeAuto     Mode = "auto"
	ModeCopy     Mode = "copy"
	ModeZeroCopy Mode = "zerocopy"
)

// Options shape one socket.
type Options struct {
	// Ifindex and Queue are the interface and its queue the socket binds.
	Ifindex, Queue int
	// Frames is the number of UMEM frames (0: DefaultFrames).
	Frames int
	// FrameSize is a frame's size in bytes: a power of two from 2048 to
	// 4096 (0: DefaultFrameSize).
	FrameSize int
	// RingSize is every ring's number of descriptors, a power of two
	// (0: DefaultRingSize).
	RingSize int
	// Mode is auto, copy or zerocopy ("" is auto).
	Mode Mode
	// NeedWakeup asks for XDP_USE_NEED_WAKEUP (see the package doc).
	NeedWakeup bool
	// RX and TX say which directions the socket has (at least one): RX
	// makes the fill and RX rings, TX the TX and completion rings.
	RX, TX bool
}

// ErrOptions marks options Open refuses before touching the kernel.
var ErrOptions = errors.New("invalid AF_XDP socket options")

// DefaultFrames is the number of frames Open gives a socket of ring size
// ringSize and the directions asked for: two rings' worth per direction.
func DefaultFrames(ringSize int, rx, tx bool) int {
	n := 0
	if rx {
		n += 2 * ringSize
	}
	if tx {
		n += 2 * ringSize
	}
	return n
}

// withDefaults is o with its zero sizes defaulted, or an error naming
// the first field out of range.
func (o Options) withDefaults() (Options, error) {
	bad := func(format string, a ...any) (Options, error) {
		return o, fmt.Errorf("%w: %s", ErrOptions, fmt.Sprintf(format, a...))
	}
	if !o.RX && !o.TX {
		return bad("neither RX nor TX asked for")
	}
	switch o.Mode {
	case "":
		o.Mode = ModeAuto
	case ModeAuto, ModeCopy, ModeZeroCopy:
	default:
		return bad("mode %q: valid modes are %s", o.Mode, enum.And([]Mode{ModeAuto, ModeCopy, ModeZeroCopy}))
	}
	if o.Ifindex <= 0 {
		return bad("interface index %d: want > 0", o.Ifindex)
	}
	if o.Queue < 0 {
		return bad("queue %d: want >= 0", o.Queue)
	}
	if o.FrameSize == 0 {
		o.FrameSize = DefaultFrameSize
	}
	if o.FrameSize != 2048 && o.FrameSize != 4096 {
		return bad("frame size %d: want 2048 or 4096", o.FrameSize)
	}
	if o.RingSize == 0 {
		o.RingSize = DefaultRingSize
	}
	if o.RingSize < 1 || o.RingSize > MaxRingSize || o.RingSize&(o.RingSize-1) != 0 {
		return bad("ring size %d: want a power of two up to %d", o.RingSize, MaxRingSize)
	}
	if o.Frames == 0 {
		o.Frames = DefaultFrames(o.RingSize, o.RX, o.TX)
	}
	if o.Frames < 1 || o.Frames > MaxFrames {
		return bad("frames %d: want 1-%d", o.Frames, MaxFrames)
	}
	return o, nil
}

// Ring names one of a socket's four rings.
type Ring int

// Rings.
const (
	Fill Ring = iota
	Completion
	RX
	TX
)

var ringNames = [...]string{Fill: "fill", Completion: "completion", RX: "rx", TX: "tx"}

func (r Ring) String() string {
	if r >= 0 && int(r) < len(ringNames) {
		return ringNames[r]
	}
	return fmt.Sprintf("ring(%d)", int(r))
}

// Stats are the kernel's counters of one socket (XDP_STATISTICS).
type Stats struct {
	// RxDropped: frames dropped for want of UMEM space (fill ring empty
	// or frame too large).
	RxDropped uint64
	// RxInvalid and TxInvalid: descriptors the kernel found invalid.
	RxInvalid, TxInvalid uint64
	// RxRingFull: frames dropped because the RX ring was full.
	RxRingFull uint64
	// FillRingEmpty: times the fill ring was empty when a frame came.
	FillRingEmpty uint64
	// TxRingEmpty: times the kernel found the TX ring empty.
	TxRingEmpty uint64
}

// Desc is one RX or TX descriptor: a frame's UMEM address, its length and
// options, laid out as the kernel's struct xdp_desc.
type Desc struct {
	Addr    uint64
	Len     uint32
	Options uint32
}
