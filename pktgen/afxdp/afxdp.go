package afxdp

import (
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/linerate/linerate/internal/xsk"
	"github.com/linerate/linerate/pktgen"
)

// DefaultBatch is the number of descriptors a thread stamps and submits
// at a time (one kick each in copy mode): as AF_PACKET's sendmmsg batch,
// and below a veth peer's 256-frame ring.
const DefaultBatch = 64

// Backend is the AF_XDP generator.
type Backend struct {
	Log hclog.Logger
	// Batch is the number of frames per submit (0 = DefaultBatch, at most
	// the ring's size).
	Batch int
	// RingSize is every socket's ring size (0 = xsk.DefaultRingSize).
	RingSize int
	// Mode is the sockets' mode ("" = auto: zero-copy, else copy).
	Mode xsk.Mode
	// Interval between progress callbacks (default 200 ms).
	Interval time.Duration
	// ThreadInit, when set, runs first on every OS thread the backend
	// uses (for example to enter a network namespace); such threads are
	// discarded afterwards.
	ThreadInit func() error
}

// New returns the backend with defaults.
func New(log hclog.Logger) *Backend { return &Backend{Log: log} }

// Name is pktgen.BackendAFXDP.
func (b *Backend) Name() pktgen.BackendName { return pktgen.BackendAFXDP }
