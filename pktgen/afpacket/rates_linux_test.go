//go:build linux && traffic

package afpacket

import (
	"testing"

	"github.com/linerate/linerate/internal/gentest"
	"github.com/linerate/linerate/pktgen"
)

// Per-thread rates (a flow's rate split over its threads): each thread
// paced at its own, together the flow's.
func TestPerThreadRates(t *testing.T) {
	gentest.CheckPerThreadRates(t, func(s *gentest.Setup) pktgen.Backend { return newBackend(t, s) })
}
