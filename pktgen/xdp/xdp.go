package xdp

import (
	"math"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/linerate/linerate/pktgen"
)

// Defaults.
const (
	// DefaultBatchSize frames per live-frame batch: the kernel's default.
	// 32, 128 and 256 were no faster on a veth (16.8-17.0 Mpps alike) and
	// 256 overflows the veth peer's 256-frame ring now and then.
	DefaultBatchSize = 64
	// DefaultRepeat program runs per BPF_PROG_RUN call: as many as the
	// kernel takes, so a run is one call (a counted run asks for exactly
	// its count) and the ~20 ms each call costs to set up is paid once; a
	// stop interrupts the call.
	DefaultRepeat = MaxRepeat
	// MaxRepeat is the most program runs one BPF_PROG_RUN call asks for:
	// the call's repeat is a __u32 and the kernel takes any value. A
	// longer call costs nothing: the limit stops the frames at the count,
	// and a stop interrupts the call (the limit drops to 0 and a signal
	// ends the syscall). Calls whose runs mostly drop (paced, or held at
	// the start instant) ask for 16 times Repeat up to this.
	MaxRepeat = math.MaxUint32
	// MaxFrame is the largest frame live-frame mode takes: a 4 KiB page
	// less XDP_PACKET_HEADROOM (256) and the skb_shared_info tail (320).
	MaxFrame = 3520
)

// Backend is the XDP live-frame generator.
type Backend struct {
	Log hclog.Logger
	// BatchSize is the number of frames per live-frame batch (1-256;
	// 0 = DefaultBatchSize).
	BatchSize uint32
	// Repeat is the number of program runs per BPF_PROG_RUN call
	// (0 = DefaultRepeat).
	Repeat uint32
	// Interval between progress callbacks (default 200 ms).
	Interval time.Duration
	// ThreadInit, when set, runs first on every OS thread the backend
	// uses for a run or a probe, for example to enter a network
	// namespace; such threads are discarded afterwards.
	ThreadInit func() error
	// forceOwn makes the sending interface's driver need the backend's
	// own XDP program (needsOwn): a test's, for a veth, which transmits
	// without one. Unset, the kernel or the driver's name decides.
	forceOwn bool
}

// New returns the backend with defaults.
func New(log hclog.Logger) *Backend { return &Backend{Log: log} }

// Name is pktgen.BackendXDP.
func (b *Backend) Name() pktgen.BackendName { return pktgen.BackendXDP }
