package pktgen

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// Backend sends what a Config describes and reports it in a Summary: the
// kernel's pktgen (Kernel), or a userspace generator for hosts without it
// (packages pktgen/xdp and pktgen/afpacket). Every backend sends the same
// frames (BuildFrame), one sequence stream per thread, and fills the same
// Summary.
type Backend interface {
	// Name is the backend's name in summaries and logs: BackendKernel,
	// BackendXDP or BackendAFPacket.
	Name() BackendName
	// Run sends until every thread's count is reached, the duration is
	// over or ctx is cancelled (the summary is then marked Interrupted);
	// progress, when not nil, gets live samples. With cfg.StartAt set it
	// arms everything first and sends its first frames at that instant
	// (WaitUntil on the sending threads; the duration counts from it), and
	// each thread's summary tells when its first frame went
	// (FirstFrameNs).
	Run(ctx context.Context, cfg Config, progress func(Progress)) (*Summary, error)
}

var _ Backend = (*Kernel)(nil)

// Name is BackendKernel.
func (k *Kernel) Name() BackendName { return BackendKernel }

// ErrUnsupported is returned when a backend cannot honour a Config field
// (the message names it; such errors also match ErrConfig), or cannot run
// on this host or interface (the message says why).
var ErrUnsupported = errors.New("not supported by this backend")

// Finish fills the summary's totals (packets, errors, pps, L2 and L1
// rates) from its threads and USec.
func (s *Summary) Finish(frameBytes float64) { s.finish(frameBytes) }

// Rate is packets per second over usec microseconds (0 when usec is 0).
func Rate(packets, usec uint64) float64 { return rate(packets, usec) }

// UserspaceCheck refuses, naming the field, what the userspace backends
// cannot send the way pktgen would: they send one frame template per
// thread (BuildFrame) with only the sequence, timestamp, UDP source port
// and UDP checksum changing.
func (c *Config) UserspaceCheck(backend BackendName) error {
	var errs []error
	refuse := func(field, why string) {
		errs = append(errs, fmt.Errorf("%s backend: %s: %s: %w (%w)", backend, field, why, ErrUnsupported, ErrConfig))
	}
	if len(c.IMIX) > 0 {
		refuse("imix", "one frame size per run (pkt_size); use the kernel backend for an internet mix")
	}
	if c.MinPktSize != 0 || c.MaxPktSize != 0 {
		refuse("min_pkt_size", "one frame size per run (pkt_size), no size ranges (max_pkt_size)")
	}
	if c.Frags > 0 {
		refuse("frags", "frames are sent linear, without page fragments")
	}
	if c.CloneSkb > 0 {
		refuse("clone_skb", "every frame is its own packet with its own sequence number (clone_skb 0)")
	}
	if c.Burst > 1 {
		refuse("burst", "frames are always sent in batches (sendmmsg or live-frame batches), each with its own sequence number; burst's repeated copies are not made (use burst 1)")
	}
	if c.XmitMode != "" && c.XmitMode != XmitStart && (backend != BackendAFPacket || c.XmitMode != XmitQueue) {
		refuse("xmit_mode", fmt.Sprintf("%q: the userspace backends transmit on the device like start_xmit (afpacket through the qdisc too, like queue_xmit)", c.XmitMode))
	}
	if err := c.NeedWakeup.CheckFor(backend == BackendAFXDP, "backend "+string(backend)); err != nil {
		refuse("need_wakeup", err.Error())
	}
	if c.Flows > 0 || c.FlowLen > 0 {
		refuse("flows", "one flow per thread (its source address); no flow table")
	}
	if c.HasQueueMap {
		refuse("queue_map", "the TX queue follows the sending CPU (XPS, the driver's per-CPU XDP ring); pin threads with cpus instead")
	}
	if len(c.ThreadCPUs()) < len(c.CPUs) {
		refuse("cpus", "one sending thread per CPU; several streams on one CPU (one per TX queue) are the kernel backend's")
	}
	if c.HasNode {
		refuse("node", "buffers are allocated by the pinned sending thread, on its own node")
	}
	if c.DstMax.IsValid() && c.DstMax != c.DstMin {
		refuse("dst_max", "one destination address per run")
	}
	if c.SrcMax.IsValid() && c.SrcMax != c.SrcMin && !c.SrcPerThread {
		refuse("src_max", "one source address per thread (SrcPerThread), no source ranges")
	}
	if c.UDPDstMax != 0 && c.UDPDstMax != c.UDPDstMin {
		refuse("udp_dst_max", "one UDP destination port; a UDP source port range spreads flows instead")
	}
	for _, f := range c.Flags {
		switch f {
		case "NO_TIMESTAMP", "UDPCSUM", "!NO_TIMESTAMP", "!UDPCSUM":
		default:
			refuse("flag", fmt.Sprintf("%s: only NO_TIMESTAMP and UDPCSUM are supported", f))
		}
	}
	return errors.Join(errs...)
}

// Period is thread i's packet spacing the config asks for, as the
// fraction num/den nanoseconds (0/1 when unpaced): from its Rates entry,
// RatePPS, DelayNS (between pktgen's transmit calls, each of Burst
// packets), or RateMbps the way pktgen converts it (pkt_size*8 bits at
// that rate). The fraction is exact: threads paced at their Rates send
// together exactly the flow's rate.
func (c *Config) Period(i int) (num, den uint64) {
	switch {
	case c.Rates != nil && i < len(c.Rates) && c.Rates[i] > 0:
		return 1e9, c.Rates[i]
	case c.RatePPS > 0:
		return 1e9, c.RatePPS
	case c.DelayNS > 0:
		return c.DelayNS, uint64(max(c.Burst, 1))
	case c.RateMbps > 0:
		size := uint64(c.PktSize)
		if size == 0 {
			size = uint64(c.FrameBytes())
		}
		return size * 8 * 1000, c.RateMbps
	}
	return 0, 1
}

// ThreadEntry names thread i for a userspace backend: "<dev>@cpu<cpu>".
func (c *Config) ThreadEntry(i int) string {
	return fmt.Sprintf("%s@cpu%d", c.Device, c.CPUs[i])
}

// HasFlag reports whether flag name is set (and not cleared with !name later).
func (c *Config) HasFlag(name string) bool {
	on := false
	for _, f := range c.Flags {
		switch {
		case f == name:
			on = true
		case strings.TrimPrefix(f, "!") == name:
			on = false
		}
	}
	return on
}
