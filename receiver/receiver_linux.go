//go:build linux

package receiver

import (
	"fmt"
	"net"
	"strings"

	"github.com/hashicorp/go-hclog"

	"github.com/linerate/linerate/internal/xsk"
)

// start opens the counters and the method: XDP (native, else generic),
// and with MethodAuto AF_PACKET when XDP cannot be used; AF_XDP only when
// asked for. Auto never chooses AF_XDP: it needs an XDP program on the
// interface as the xdp method does (so it cannot stand in where XDP
// cannot attach), and it copies every test frame to Go (in copy mode, all
// a virtual device has) where the xdp method counts it in place.
func start(o Options) (_ *Receiver, err error) {
	links, err := openLinkStats(o.Iface)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			links.close()
		}
	}()
	r := &Receiver{o: o, links: links}
	log := o.Logger.With("iface", o.Iface)
	driver := links.driver
	if driver == "" {
		driver = "unknown"
	}
	if o.Method == MethodAFXDP {
		return startXSK(o, r, links, driver, log)
	}
	var xerr error
	if o.Method == MethodXDP || o.Method == MethodAuto {
		var x *xdpMethod
		if x, xerr = loadXDP(o); xerr == nil {
			if r.base, err = links.read(); err != nil {
				x.close()
				return nil, err
			}
			var mode, detail string
			if mode, detail, xerr = x.attach(links.index); xerr == nil {
				r.m, r.method, r.xdpMode = x, MethodXDP, mode
				r.reason = fmt.Sprintf("XDP program attached to %s (driver %s) in %s", o.Iface, driver, detail)
				if o.Method == MethodAuto {
					r.reason = "auto: " + r.reason
				}
				log.Info("receiver counting", "method", r.method, "reason", r.reason, "pass", o.Pass)
				return r, nil
			}
			x.close()
		}
		if o.Method == MethodXDP {
			return nil, fmt.Errorf("receiver on %s: %w", o.Iface, xerr)
		}
		if len(o.Reflect) > 0 {
			return nil, fmt.Errorf("receiver on %s: reflecting ports %v needs the XDP method, which cannot count here (AF_PACKET cannot reflect): %w", o.Iface, o.Reflect, xerr)
		}
		log.Warn("XDP cannot count here, falling back to AF_PACKET", "error", xerr)
	}
	if r.base, err = links.read(); err != nil {
		return nil, err
	}
	a, err := startAFPacket(o, links.index)
	if err != nil {
		return nil, fmt.Errorf("receiver on %s: %w", o.Iface, err)
	}
	r.m, r.method = a, MethodAFPacket
	how := fmt.Sprintf("TPACKET_V3 rings on %d CPUs with PACKET_FANOUT_CPU on %s (driver %s)", len(a.rings), o.Iface, driver)
	if xerr != nil {
		r.reason = fmt.Sprintf("auto: XDP could not be used (%v); %s", xerr, how)
	} else {
		r.reason = "afpacket asked for: " + how
	}
	if !o.Pass {
		log.Info("AF_PACKET taps: packets also continue to the network stack (no drop)")
	}
	log.Info("receiver counting", "method", r.method, "reason", r.reason)
	return r, nil
}

// startXSK starts the afxdp method on r's interface: a socket per receive
// queue, zero-copy where the driver binds it (else copy), need_wakeup as
// o.NeedWakeup and the device say (rxWakeup), each queue's reader on its
// CPU (Options.CPUs, else the process's), the redirect program attached
// native, else generic.
func startXSK(o Options, r *Receiver, links *linkStats, driver string, log hclog.Logger) (*Receiver, error) {
	queues, err := links.rxQueues()
	if err != nil {
		return nil, fmt.Errorf("receiver on %s: afxdp: %w", o.Iface, err)
	}
	cpus := o.CPUs
	if len(cpus) == 0 {
		if cpus, err = allowedCPUs(); err != nil {
			return nil, fmt.Errorf("receiver on %s: afxdp: %w", o.Iface, err)
		}
	}
	var bus string
	if info, err := links.eth.Info(); err == nil {
		bus = info.BusInfo
	}
	wakeup, wakeWhy := o.NeedWakeup.Choose(xsk.Virtual(driver, bus))
	ifi, err := net.InterfaceByIndex(links.index)
	if err != nil {
		return nil, fmt.Errorf("receiver on %s: afxdp: read the MTU: %w", o.Iface, err)
	}
	frameSize, err := afxdpFrameSize(o.Iface, ifi.MTU)
	if err != nil {
		return nil, err
	}
	if r.base, err = links.read(); err != nil {
		return nil, err
	}
	a, xdpMode, detail, err := startAFXDP(o, afxdpSetup{ifindex: links.index, queues: queues, cpus: cpus, mode: xsk.ModeAuto, wakeup: wakeup, frameSize: frameSize})
	if err != nil {
		return nil, fmt.Errorf("receiver on %s: %w", o.Iface, err)
	}
	mode, modeWhy, bound, boundWhy := a.sockets()
	if wakeup && !bound {
		wakeWhy = boundWhy // the kernel refused the flag (warned at bind)
	}
	on := make([]string, len(a.queues))
	for i, xq := range a.queues {
		on[i] = fmt.Sprintf("q%d→cpu%d", xq.q, xq.cpu)
	}
	r.m, r.method, r.xdpMode = a, MethodAFXDP, xdpMode
	r.redirectDropsInLink = xdpMode == XDPNative && (driver == "veth" || driver == "virtio_net")
	r.reason = fmt.Sprintf("AF_XDP sockets on %d receive queues of %s (driver %s) in %s mode (%s), %s; readers %s; redirect program in %s; %s",
		len(a.queues), o.Iface, driver, mode, modeWhy, wakeWhy, strings.Join(on, " "), detail, a.redir.stampText())
	log.Info("receiver counting", "method", r.method, "reason", r.reason, "pass", o.Pass)
	return r, nil
}

// afxdpFrameSize is the UMEM chunk that holds the largest frame an
// interface of mtu delivers (its Ethernet header and up to two VLAN tags
// on top) after the kernel's headroom: xsk.DefaultFrameSize where it
// fits, else xsk.MaxFrameSize; an MTU beyond that is refused by name,
// rather than every larger test frame dropped by the kernel.
func afxdpFrameSize(iface string, mtu int) (int, error) {
	largest := mtu + 14 + 2*4
	switch {
	case largest <= xsk.DefaultFrameSize-xsk.Headroom:
		return xsk.DefaultFrameSize, nil
	case largest <= xsk.MaxFrameSize-xsk.Headroom:
		return xsk.MaxFrameSize, nil
	}
	return 0, fmt.Errorf("%w: --method afxdp on %s: its MTU %d delivers frames of up to %d bytes; an AF_XDP chunk holds at most %d (%d less the kernel's %d-byte headroom): want an MTU of at most %d, or --method xdp",
		ErrOptions, iface, mtu, largest, xsk.MaxFrameSize-xsk.Headroom, xsk.MaxFrameSize, xsk.Headroom, xsk.MaxFrameSize-xsk.Headroom-22)
}
