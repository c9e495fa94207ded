//go:build !linux

package receiver

import (
	"fmt"
	"runtime"
)

func start(o Options) (*Receiver, error) {
	return nil, fmt.Errorf("receiver on %s: counting needs Linux (XDP or AF_PACKET), not %s: %w", o.Iface, runtime.GOOS, ErrNotSupported)
}
