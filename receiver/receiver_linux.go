//go:build linux

package receiver

import "fmt"

// start opens the counters and the method: XDP (native, else generic),
// and with MethodAuto AF_PACKET when XDP cannot be used.
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
