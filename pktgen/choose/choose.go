// Package choose resolves a backend name (pktgen.BackendName) into a
// pktgen.Backend, the one rule `linerate send` and the agent share:
// "auto" is the kernel's pktgen when /proc/net/pktgen exists, else
// "userspace"; "userspace" is XDP live frames when they can run on the
// interface, else AF_XDP when a socket binds to it, else AF_PACKET.
//
// The order is the engines' speed where each works: kernel pktgen sends
// from the kernel with no copy and no syscall per batch; XDP live frames
// (where the driver has ndo_xdp_xmit) run the whole send loop in the
// kernel too, with a syscall per call of millions of frames; AF_XDP
// needs a syscall per batch in copy mode but no skb per frame in
// zero-copy, and every driver binds at least in copy mode; AF_PACKET is
// the portable floor (docs/benchmarks.md has the figures).
//
// When "auto" finds no pktgen, Options.LoadModule is tried once:
// [ModuleLoader] runs `modprobe pktgen`, which needs root ([ErrNotRoot]
// otherwise); the agent gives none and never loads modules.
package choose

import (
	"errors"
	"fmt"

	"github.com/hashicorp/go-hclog"

	"github.com/linerate/linerate/pktgen"
	"github.com/linerate/linerate/pktgen/afpacket"
	"github.com/linerate/linerate/pktgen/afxdp"
	"github.com/linerate/linerate/pktgen/xdp"
)

// ErrUnknown is returned when the name is none of pktgen.BackendNames.
var ErrUnknown = errors.New("unknown backend")

// Options shape the choice.
type Options struct {
	Log hclog.Logger
	// Kernel is the kernel backend to offer (default pktgen.NewKernel).
	Kernel *pktgen.Kernel
	// LoadModule, when set, is tried once when "auto" finds no pktgen
	// (ModuleLoader.Load: `modprobe pktgen` for a command run as root).
	LoadModule func() error
	// ThreadInit is given to the userspace backends (tests use it to
	// enter a network namespace).
	ThreadInit func() error
	// Threads is how many threads the send will run when known (0: not
	// yet, taken as 1): AF_XDP needs a queue of its own for each, so
	// "userspace" passes it by on an interface of fewer queues.
	Threads int
}

// KernelAvailable is nil when the kernel backend k (nil:
// pktgen.NewKernel, the host's /proc/net/pktgen) can run here: pktgen is
// loaded and its pgctrl readable. Otherwise it says why, wrapping
// pktgen.ErrNoPktgen when the module is not loaded. It is the one test of
// "kernel pktgen is available": Backend's, and the agent's list of the
// backends its host can run.
func KernelAvailable(k *pktgen.Kernel) error {
	if k == nil {
		k = pktgen.NewKernel(nil)
	}
	_, err := k.Available()
	return err
}

// Backend returns the backend for name on iface and why it was chosen.
// An explicitly named backend that cannot run here is an error wrapping
// pktgen.ErrNoPktgen or pktgen.ErrUnsupported.
func Backend(name pktgen.BackendName, iface string, o Options) (pktgen.Backend, string, error) {
	if o.Log == nil {
		o.Log = hclog.NewNullLogger()
	}
	k := o.Kernel
	if k == nil {
		k = pktgen.NewKernel(o.Log)
	}
	xb := xdp.New(o.Log)
	xb.ThreadInit = o.ThreadInit
	ab := afpacket.New(o.Log)
	ab.ThreadInit = o.ThreadInit
	sb := afxdp.New(o.Log)
	sb.ThreadInit = o.ThreadInit
	switch name {
	case pktgen.BackendKernel:
		if err := KernelAvailable(k); err != nil {
			return nil, "", fmt.Errorf("backend kernel: %w", err)
		}
		return k, "asked for", nil
	case pktgen.BackendXDP:
		if err := xb.Probe(iface); err != nil {
			return nil, "", fmt.Errorf("backend xdp: %w", err)
		}
		return xb, "asked for", nil
	case pktgen.BackendAFXDP:
		if err := sb.ProbeQueues(iface, o.Threads); err != nil {
			return nil, "", fmt.Errorf("backend afxdp: %w", err)
		}
		return sb, "asked for", nil
	case pktgen.BackendAFPacket:
		return ab, "asked for", nil
	case pktgen.BackendAuto:
		err := KernelAvailable(k)
		if err != nil && o.LoadModule != nil {
			if lerr := o.LoadModule(); lerr != nil {
				err = fmt.Errorf("%w; loading the module: %v", err, lerr)
			} else {
				err = KernelAvailable(k)
			}
		}
		if err == nil {
			return k, pktgen.DefaultProcDir + " exists", nil
		}
		o.Log.Info("no kernel pktgen: trying the userspace backends", "why", err)
	case pktgen.BackendUserspace:
	default:
		return nil, "", fmt.Errorf("%w %v", ErrUnknown, name.Check())
	}
	xerr := xb.Probe(iface)
	if xerr == nil {
		return xb, "XDP live frames work on " + iface, nil
	}
	serr := sb.ProbeQueues(iface, o.Threads)
	if serr == nil {
		return sb, fmt.Sprintf("XDP live frames cannot send from %s (%v); an AF_XDP socket binds to it", iface, xerr), nil
	}
	return ab, fmt.Sprintf("XDP live frames cannot send from %s (%v), nor AF_XDP (%v)", iface, xerr, serr), nil
}
