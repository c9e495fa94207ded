//go:build linux && traffic

package xdp

import (
	"testing"

	"github.com/linerate/linerate/pktgen"
	"github.com/linerate/linerate/pktgen/pktgentest"
)

// Per-thread rates (a flow's rate split over its threads): each thread
// paced at its own, together the flow's.
func TestPerThreadRates(t *testing.T) {
	pktgentest.SkipUnlessLiveFrames(t)
	pktgentest.CheckPerThreadRates(t, func(s *pktgentest.Setup) pktgen.Backend { return newBackend(t, s) })
}
