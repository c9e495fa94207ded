package receiver

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
)

// linkReader reads an interface's counters; opened in its namespace.
type linkReader interface {
	read() (LinkCounters, error)
	close()
}

// Receiver counts the test traffic arriving on one interface, from Start
// until Stop (or until Start's context is cancelled).
type Receiver struct {
	o       Options
	m       method
	links   linkReader
	base    LinkCounters
	method  Method
	reason  string
	xdpMode string // XDPNative or XDPGeneric for the xdp method
	// redirectDropsInLink: the afxdp method's socket drops are in the
	// link's rx_dropped too (a native program on veth or virtio_net).
	redirectDropsInLink bool

	mu       sync.Mutex // serialises Snapshot and finishing
	finished bool
	report   *Report
	err      error
	quit     chan struct{} // closed when finished: ends the context watcher
}

// Start attaches the counting method to o.Iface and reads the baseline
// interface counters. It must be called from a thread in the interface's
// network namespace (for a namespace made with internal/netns, inside
// ns.Do): the XDP link, the packet sockets and the netlink and ethtool
// sockets that read the counters are all opened here and stay bound to
// that namespace, so Snapshot, Stop and Close work from any goroutine.
//
// Packets that arrive after Start returns are counted. When ctx is
// cancelled the receiver stops counting and detaches at once, as Stop
// does; Stop then returns what was counted until then. Call Stop (or
// Close, on error paths) in every case: defer r.Close() right after Start
// is always safe. If the process dies, the kernel detaches the XDP
// program and closes the sockets itself (they are file descriptors).
func Start(ctx context.Context, o Options) (*Receiver, error) {
	if o.Iface == "" {
		iface, _ := orField(o.Names.Iface, "Iface")
		return nil, fmt.Errorf("%w: %s is empty (want an interface name)", ErrOptions, iface)
	}
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	r, err := start(o)
	if errors.Is(err, ErrNoInterface) {
		iface, _ := orField(o.Names.Iface, "Iface")
		return nil, fmt.Errorf("%s %s: %w (here: %s)", iface, o.Iface, ErrNoInterface, interfaceNames())
	}
	if err != nil {
		return nil, err
	}
	r.quit = make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			if _, err := r.finish(); err != nil {
				r.o.Logger.Error("stop receiver after cancellation", "iface", r.o.Iface, "error", err)
			}
		case <-r.quit:
		}
	}()
	return r, nil
}

// Method is MethodXDP or MethodAFPacket; reason says why.
func (r *Receiver) Method() (method Method, reason string) { return r.method, r.reason }

// XDPMode is XDPNative or XDPGeneric for the xdp method, else "".
func (r *Receiver) XDPMode() string { return r.xdpMode }

// Snapshot returns the counts so far, for progress: streams without
// missing ranges (Missing itself is exact),
// link counter deltas so far. After the receiver has stopped it returns
// the final report.
func (r *Receiver) Snapshot() Report {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.finished {
		if r.report != nil {
			return *r.report
		}
		return r.build(counts{}, LinkCounters{})
	}
	c, err := r.m.snapshot()
	if err != nil {
		r.o.Logger.Warn("receiver snapshot", "iface", r.o.Iface, "error", err)
	}
	l, err := r.links.read()
	if err != nil {
		r.o.Logger.Warn("receiver snapshot: link counters", "iface", r.o.Iface, "error", err)
	}
	return r.build(c, l.sub(r.base))
}

// Stop stops counting, detaches (always, also when it returns an error),
// reads the final interface counters and returns the report. Calling it
// again returns the same report.
func (r *Receiver) Stop() (*Report, error) { return r.finish() }

// Close detaches and releases everything, discarding the report: for
// error paths and defers. Safe to call any number of times, before or
// after Stop.
func (r *Receiver) Close() error {
	_, err := r.finish()
	return err
}

func (r *Receiver) finish() (rep *Report, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.finished {
		return r.report, r.err
	}
	r.finished = true
	close(r.quit)
	defer func() {
		// Whatever happened above (even a panic), release the method and
		// the counter sockets.
		cerr := r.m.close()
		r.links.close()
		r.err = errors.Join(r.err, cerr)
		err = r.err
	}()
	c, serr := r.m.stop()
	l, lerr := r.links.read()
	rp := r.build(c, l.sub(r.base))
	r.report, r.err = &rp, errors.Join(serr, lerr)
	return r.report, r.err
}

// interfaceNames lists the interfaces of the calling thread's network
// namespace, for the error of one that is not there.
func interfaceNames() string {
	ifs, err := net.Interfaces()
	if err != nil {
		return "cannot list interfaces: " + err.Error()
	}
	var names []string
	for _, i := range ifs {
		names = append(names, i.Name)
	}
	return strings.Join(names, ", ")
}

func (r *Receiver) build(c counts, link LinkCounters) Report {
	if r.method == MethodAFXDP && r.redirectDropsInLink {
		// The sockets' drops are the driver's failed redirects, which a
		// native program's veth and virtio_net count in rx_dropped too:
		// taken out there, so that a drop counts once in HostDrops.
		// (Generic mode frees the skb uncounted; other drivers count
		// them in their own XDP counters.)
		link.RxDropped -= min(link.RxDropped, c.ringDrops)
	}
	rep := Report{
		Method: r.method, MethodReason: r.reason, XDPMode: r.xdpMode,
		OtherPackets: c.other, OverflowPackets: c.overflow,
		Streams: c.streams, Link: link, RingDrops: c.ringDrops, Window: r.o.Window,
	}
	if rep.Streams == nil {
		rep.Streams = []StreamReport{}
	}
	rep.Packets = rep.TestPackets() + rep.OtherPackets
	return rep
}
