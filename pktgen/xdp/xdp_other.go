//go:build !linux

package xdp

import (
	"context"
	"fmt"
	"runtime"

	"github.com/linerate/linerate/pktgen"
)

// Probe reports that XDP live frames need Linux.
func (b *Backend) Probe(iface string) error {
	return fmt.Errorf("xdp backend on %s: needs Linux 5.18+: %w", runtime.GOOS, pktgen.ErrUnsupported)
}

// Run reports that XDP live frames need Linux.
func (b *Backend) Run(ctx context.Context, cfg pktgen.Config, progress func(pktgen.Progress)) (*pktgen.Summary, error) {
	return nil, b.Probe(cfg.Device)
}
