package pktgen

import (
	"fmt"
	"slices"

	"github.com/linerate/linerate/internal/enum"
)

// BackendName names a sender backend, or a choice among them, as a run's
// spec, a campaign spec, `linerate send --backend` and an agent's
// Configure give it. pktgen/choose turns a name into a Backend on the
// sending host; a Backend's Name is one of BackendKernel, BackendXDP,
// BackendAFXDP and BackendAFPacket.
type BackendName string

// Backend names.
const (
	// BackendAuto is the kernel's pktgen when /proc/net/pktgen exists,
	// else BackendUserspace.
	BackendAuto BackendName = "auto"
	// BackendKernel is the kernel's pktgen (Kernel).
	BackendKernel BackendName = "kernel"
	// BackendXDP is XDP live frames (package pktgen/xdp).
	BackendXDP BackendName = "xdp"
	// BackendAFPacket is AF_PACKET sendmmsg (package pktgen/afpacket).
	BackendAFPacket BackendName = "afpacket"
	// BackendAFXDP is AF_XDP sockets, one per TX queue (package
	// pktgen/afxdp).
	BackendAFXDP BackendName = "afxdp"
	// BackendUserspace is XDP live frames when they can send from the
	// interface, else AF_XDP when a socket binds, else AF_PACKET.
	BackendUserspace BackendName = "userspace"
)

// BackendNames lists every valid backend name, the default first: the one
// list every validator, error and flag help says.
var BackendNames = []BackendName{BackendAuto, BackendKernel, BackendXDP, BackendAFXDP, BackendAFPacket, BackendUserspace}

// Check is nil when b is one of BackendNames; otherwise it names b and
// the valid names, for the caller to prefix with its field.
func (b BackendName) Check() error {
	if slices.Contains(BackendNames, b) {
		return nil
	}
	return fmt.Errorf("%q: valid backends are %s", b, enum.And(BackendNames))
}
