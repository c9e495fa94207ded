package engine

import (
	"fmt"
	"net"

	"github.com/linerate/linerate/pktgen"
)

// Up is the interface a userspace backend sends from, or an error that
// names backend and iface: wrapping pktgen.ErrNoDevice when there is no
// such interface (in the calling thread's namespace), ErrDeviceDown when
// it is down.
func Up(backend pktgen.BackendName, iface string) (*net.Interface, error) {
	ifi, err := net.InterfaceByName(iface)
	if err != nil {
		return nil, fmt.Errorf("%s backend: interface %q: %w: %w", backend, iface, pktgen.ErrNoDevice, err)
	}
	if ifi.Flags&net.FlagUp == 0 {
		return nil, fmt.Errorf("%s backend: %s: %w (ip link set %s up)", backend, iface, pktgen.ErrDeviceDown, iface)
	}
	return ifi, nil
}
