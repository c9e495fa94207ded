package afpacket

import (
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/linerate/linerate/pktgen"
)

// DefaultBatch frames per sendmmsg call.
const DefaultBatch = 64

// Backend is the AF_PACKET generator.
type Backend struct {
	Log hclog.Logger
	// Batch is the number of frames per sendmmsg call (0 = DefaultBatch, at
	// most 1024).
	Batch int
	// Interval between progress callbacks (default 200 ms).
	Interval time.Duration
	// ThreadInit, when set, runs first on every OS thread the backend
	// uses (for example to enter a network namespace); such threads are
	// discarded afterwards.
	ThreadInit func() error
}

// New returns the backend with defaults.
func New(log hclog.Logger) *Backend { return &Backend{Log: log} }

// Name is pktgen.BackendAFPacket.
func (b *Backend) Name() pktgen.BackendName { return pktgen.BackendAFPacket }
