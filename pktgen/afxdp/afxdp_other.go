//go:build !linux

package afxdp

import (
	"context"
	"fmt"
	"runtime"

	"github.com/linerate/linerate/pktgen"
)

// Probe reports that AF_XDP needs Linux.
func (b *Backend) Probe(iface string) error {
	return fmt.Errorf("afxdp backend on %s: needs Linux: %w", runtime.GOOS, pktgen.ErrUnsupported)
}

// Run reports that AF_XDP needs Linux.
func (b *Backend) Run(ctx context.Context, cfg pktgen.Config, progress func(pktgen.Progress)) (*pktgen.Summary, error) {
	return nil, b.Probe(cfg.Device)
}
