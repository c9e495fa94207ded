package agent

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"

	"github.com/linerate/linerate/pktgen"
	"github.com/linerate/linerate/pktgen/choose"
	"github.com/linerate/linerate/topology"
)

// A send is composed one way wherever it starts, the agent's Configure
// (configure.go) and `linerate send` (LocalSend) alike: what the caller
// gives is kept, the host fills in the rest (the interface's source
// address, the destination's MAC from the neighbour table, the threads
// on the host's queues by pktgen.Slots), the frame sizes are checked
// against the interface's MTU, totals are split over the threads, and
// the whole is validated, for its backend too. Errors are of kind
// ErrInvalid (the caller's input, named as the caller names it) or
// ErrHost (the host cannot).

// SendNames are how a caller names a send's inputs in its errors: the
// agent its request's fields (config.src_min), a command its flags
// (--src).
type SendNames struct {
	Device, Src, DstMAC, Backend string
	// FrameSize names the frame size; FrameWithFCS says that the caller
	// counts it with the FCS (RFC 2544's 64), else without (pkt_size).
	FrameSize    string
	FrameWithFCS bool
	// IMIX names an imix's entries (their sizes count the FCS).
	IMIX string
	// Count and Rate name the totals split over the threads; Threads
	// and CPUs what chooses the threads.
	Count, Rate, Threads, CPUs string
}

// configNames are the agent's: the fields of Configure's config.
var configNames = SendNames{
	Device: "config.device", Src: "config.src_min", DstMAC: "config.dst_mac", Backend: "config.backend",
	FrameSize: "config.pkt_size", IMIX: "config.imix", Count: "config.counts", Rate: "config.rates", Threads: "config.cpus", CPUs: "config.cpus",
}

// sendInput is a send as its caller gives it.
type sendInput struct {
	// cfg has Device and DstMin; SrcMin, DstMAC and CPUs may be empty,
	// for the host to fill in.
	cfg pktgen.Config
	// count and rate are totals over the threads, split once they are
	// laid out (0: cfg's own counts and rates).
	count, rate uint64
	// choose, when set, chooses the send's backend once the caller's
	// rails passed, before anything else touches the device (an XDP
	// probe): the backend lays the threads out (the kernel backend's one
	// stream per tuned queue) and cfg is checked against what it can
	// send. Without it the threads are one per CPU, and the caller
	// checks the backend it chooses later.
	choose func(device string, threads int) (pktgen.Backend, error)
	names  SendNames
}

// sendHost is what compose reads of the host, each when it needs it.
type sendHost struct {
	// link reads the device: its MAC, addresses and MTU.
	link func(device string) (ifaceInfo, error)
	// check, when set, refuses what the caller's rails do not allow, once
	// the device's own MAC is known (the agent's frameRails).
	check func(cfg *pktgen.Config, own net.HardwareAddr) error
	// neighbour is an address's MAC in the host's neighbour table (nil:
	// the caller gives the destination's MAC).
	neighbour func(ip netip.Addr) (net.HardwareAddr, error)
	// place is where threads may run when the caller gave no CPUs: the
	// tuned (or planned) queues and their CPUs, else untuned CPUs; a
	// warning says when that is a fallback.
	place func() (pins []pktgen.QueuePin, untuned []int, warning string, err error)
}

// compose completes in's configuration on host h and checks it; it
// returns the backend in.choose chose (nil without in.choose).
func compose(in sendInput, h sendHost) (*pktgen.Config, pktgen.Backend, []string, error) {
	cfg, n := in.cfg, in.names
	var warnings []string
	link, err := h.link(cfg.Device)
	if err != nil {
		return nil, nil, nil, failf(ErrHost, "%s %s: %v", n.Device, cfg.Device, err)
	}
	if h.check != nil {
		if err := h.check(&cfg, link.mac); err != nil {
			return nil, nil, nil, err
		}
	}
	var be pktgen.Backend
	if in.choose != nil {
		if be, err = in.choose(cfg.Device, len(cfg.CPUs)); err != nil {
			return nil, nil, nil, err
		}
	}
	if len(cfg.CPUs) == 0 {
		pins, untuned, warning, err := h.place()
		if err != nil {
			return nil, nil, nil, err
		}
		if warning != "" {
			warnings = append(warnings, warning)
		}
		if len(cfg.Queues) == 0 {
			paced := in.rate > 0 || cfg.RatePPS > 0 || cfg.RateMbps > 0 || cfg.DelayNS > 0 || slices.ContainsFunc(cfg.Rates, func(r uint64) bool { return r > 0 })
			cfg.CPUs, cfg.Queues = pktgen.SlotLists(pktgen.Slots(pins, untuned, pktgen.KernelPerQueue(be != nil && be.Name() == pktgen.BackendKernel, paced)))
		} else {
			// Queues the caller gave are kept, on the slots' CPUs.
			cfg.CPUs, _ = pktgen.SlotLists(pktgen.Slots(pins, untuned, false))
		}
	}
	threads := uint64(len(cfg.CPUs))
	if in.count > 0 {
		if in.count < threads {
			return nil, nil, nil, failf(ErrInvalid, "%s %d is less than the %d threads", n.Count, in.count, threads)
		}
		cfg.Counts = pktgen.SplitCount(in.count, len(cfg.CPUs))
	}
	if in.rate > 0 {
		if in.rate < threads {
			return nil, nil, nil, failf(ErrInvalid, "%s %d over %d threads: below 1 pps per thread: want %s at least %d or fewer threads (%s, %s)",
				n.Rate, in.rate, threads, n.Rate, threads, n.Threads, n.CPUs)
		}
		cfg.Rates = pktgen.SplitRate(in.rate, len(cfg.CPUs))
	}
	if !cfg.SrcMin.IsValid() {
		src, ok := topology.SourceAddr(link.addrs, cfg.DstMin)
		if !ok {
			return nil, nil, nil, failf(ErrInvalid, "%s: missing, and %s has no address of the destination's family (%s): give %s",
				n.Src, cfg.Device, cfg.DstMin, n.Src)
		}
		cfg.SrcMin = src
	}
	if len(cfg.DstMAC) == 0 {
		if h.neighbour == nil {
			return nil, nil, nil, failf(ErrInvalid, "%s: missing", n.DstMAC)
		}
		m, err := h.neighbour(cfg.DstMin)
		if err != nil {
			return nil, nil, nil, failf(ErrInvalid, "%s: %s is not in the ARP table; give %s (or ping it first)", n.DstMAC, cfg.DstMin, n.DstMAC)
		}
		cfg.DstMAC = m
	}
	if err := checkFrames(&cfg, link.mtu, n); err != nil {
		return nil, nil, nil, err
	}
	if err := cfg.Validate(); err != nil {
		return nil, nil, nil, fail(ErrInvalid, err)
	}
	if be != nil {
		if err := checkBackend(&cfg, be); err != nil {
			return nil, nil, nil, err
		}
	}
	return &cfg, be, warnings, nil
}

// checkFrames refuses frame sizes the interface cannot carry (its MTU;
// unknown: 0) or that leave no room for the headers, in the caller's
// terms.
func checkFrames(cfg *pktgen.Config, mtu int, n SendNames) error {
	lo, hi, headers := cfg.FrameRange(mtu)
	// check refuses frame (bytes with FCS) outside lo-hi, saying the
	// sizes as the input named counts them.
	check := func(name string, withFCS bool, frame int) error {
		if frame >= lo && frame <= hi {
			return nil
		}
		fcs, what := 0, "frame without FCS"
		if withFCS {
			fcs, what = pktgen.FCSBytes, "Ethernet frame with FCS"
		}
		return failf(ErrInvalid, "%s %d: want %d-%d (%s; %d bytes of headers and the pktgen header, MTU %d)",
			name, frame-pktgen.FCSBytes+fcs, lo-pktgen.FCSBytes+fcs, hi-pktgen.FCSBytes+fcs, what, headers-pktgen.FCSBytes+fcs, mtu)
	}
	for _, s := range []int{cfg.PktSize, cfg.MinPktSize, cfg.MaxPktSize} {
		if s == 0 {
			continue
		}
		if err := check(n.FrameSize, n.FrameWithFCS, s+pktgen.FCSBytes); err != nil {
			return err
		}
	}
	// An imix's sizes count their FCS, whoever gives them.
	for i, e := range cfg.IMIX {
		if err := check(fmt.Sprintf("%s[%d]", n.IMIX, i), true, e.Size); err != nil {
			return err
		}
	}
	return nil
}

// checkSources refuses a thread that would send from its own
// destination (with SrcPerThread, thread i sends from SrcMin+i): a local
// send's first source is given by hand, the agent's by its coordinator.
func checkSources(cfg *pktgen.Config, n SendNames) error {
	for i := range cfg.CPUs {
		dst := cfg.DstMin
		if i < len(cfg.ThreadDst) {
			dst = cfg.ThreadDst[i].Addr
		}
		if src := cfg.ThreadSource(i); src == dst {
			return failf(ErrInvalid, "%s: thread %d would send from %s, the destination itself (thread i sends from %s+i); give %s outside %s..+%d",
				n.Src, i, src, n.Src, n.Src, cfg.SrcMin, len(cfg.CPUs)-1)
		}
	}
	return nil
}

// chooseBackend is choose.Backend for a send of device, in the agent's
// kinds: an unknown name is the caller's (ErrInvalid), a backend the host
// cannot run the host's (ErrHost); name is how the caller calls the
// backend's input.
func chooseBackend(backend pktgen.BackendName, device, name string, o choose.Options) (pktgen.Backend, string, error) {
	be, why, err := choose.Backend(backend, device, o)
	switch {
	case errors.Is(err, choose.ErrUnknown):
		return nil, "", failf(ErrInvalid, "%s: %v", name, err)
	case err != nil:
		return nil, "", failf(ErrHost, "%s: %v", name, err)
	}
	logOr(o.Log).Debug("backend chosen", "backend", be.Name(), "why", why)
	return be, why, nil
}

// checkBackend refuses what backend be cannot send of cfg: the
// userspace backends send one frame template per thread
// (pktgen.Config.UserspaceCheck).
func checkBackend(cfg *pktgen.Config, be pktgen.Backend) error {
	if name := be.Name(); name != pktgen.BackendKernel {
		if err := cfg.UserspaceCheck(name); err != nil {
			return fail(ErrInvalid, err)
		}
	}
	return nil
}
