package agent

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/linerate/linerate/latency"
	"github.com/linerate/linerate/pktgen"
	"github.com/linerate/linerate/receiver"
)

// Round trips without clock sync (Configure's rtt): beside the load, a
// latency stream goes to each of the send's destinations, whose
// receivers reflect it (receiver.Options.Reflect); the sender counts what
// comes back with an XDP receiver on its own interface and times it on
// its own clock. A returned frame's delay (its arrival less the send time
// its header carries) is then its round trip, exactly: one clock.

// Bounds of a latency stream.
const (
	// rttDrain is how long the returns are counted after the latency
	// stream stopped: a reflected frame is back within the path's round
	// trip, far less on any path a run measures.
	rttDrain = 200 * time.Millisecond
	// rttLongest is the latency stream's duration when the load runs by
	// count: it is stopped when the load ends.
	rttLongest = 7 * 24 * time.Hour
	// rttWindow is the returns' sequence window: 1.6 s of the fastest
	// latency stream.
	rttWindow = 1 << 14
)

// rttPlan is a latency stream as Configure asks for it: from and to UDP
// port port, ratePPS to each destination.
type rttPlan struct {
	port    uint16
	ratePPS uint64
}

// rttStreamResult is one latency stream: its destination, what was sent
// and what came back (returned: as the sender's receiver counted it, its
// latency the round trips), and the lowest round trip of each second.
type rttStreamResult struct {
	dst      netip.Addr
	port     uint16
	sent     uint64
	returned receiver.StreamReport
	lowest   []uint64
}

// rttOutcome is what a send's round trips gave; err says why there are
// none or only some (the load's result stands either way).
type rttOutcome struct {
	streams []rttStreamResult
	err     error
}

// rttConfig is the latency stream of load (composed) as plan asks: one
// thread per destination (the load's, in order), on the load's CPUs in
// turn, from the load's first source and MAC, frames of the load's size
// (the smallest test frame when it has no one size), at plan's rate, for
// the load's duration (stopped with the load when it runs by count).
func rttConfig(load pktgen.Config, plan rttPlan) (pktgen.Config, error) {
	if plan.port == 0 {
		return pktgen.Config{}, failf(ErrInvalid, "rtt.port: 0: want a UDP port, 1 to 65535")
	}
	if plan.ratePPS < 1 || plan.ratePPS > latency.MaxRTTRate {
		return pktgen.Config{}, failf(ErrInvalid, "rtt.rate_pps %d: want 1 to %d packets a second", plan.ratePPS, latency.MaxRTTRate)
	}
	var dsts []pktgen.Dest
	if len(load.ThreadDst) == 0 {
		dsts = []pktgen.Dest{{Addr: load.DstMin, MAC: load.DstMAC}}
	}
	for _, d := range load.ThreadDst {
		if !slices.ContainsFunc(dsts, func(o pktgen.Dest) bool { return o.Addr == d.Addr }) {
			dsts = append(dsts, d)
		}
	}
	var cpus []int
	for _, c := range load.CPUs {
		if !slices.Contains(cpus, c) {
			cpus = append(cpus, c)
		}
	}
	if len(dsts) > len(cpus) {
		return pktgen.Config{}, failf(ErrInvalid, "rtt: %d destinations and %d CPUs: a latency stream to each takes a CPU of the load's", len(dsts), len(cpus))
	}
	ipv6 := load.DstMin.Is6() || (len(dsts) > 0 && dsts[0].Addr.Is6())
	size := load.PktSize
	if size == 0 {
		size = max(pktgen.MinFrame(ipv6, load.HasVLAN), 60)
	}
	c := pktgen.Config{
		Device: load.Device, CPUs: cpus[:len(dsts)], PktSize: size, RatePPS: plan.ratePPS,
		Duration: load.Duration, SrcMin: load.SrcMin, SrcMAC: load.SrcMAC,
		DstMin: dsts[0].Addr, DstMAC: dsts[0].MAC,
		UDPSrcMin: int(plan.port), UDPSrcMax: int(plan.port), UDPDstMin: int(plan.port), UDPDstMax: int(plan.port), SleepPacing: true,
		VLANID: load.VLANID, HasVLAN: load.HasVLAN, VLANPrio: load.VLANPrio, TOS: load.TOS, HasTOS: load.HasTOS,
	}
	if load.XmitMode == pktgen.XmitQueue {
		// Through the sender's qdisc as the load goes (the VM lab's
		// netem): the round trip then has the path's delay in it.
		c.XmitMode = pktgen.XmitQueue
	}
	if c.Duration == 0 {
		c.Duration = rttLongest
	}
	if len(dsts) > 1 {
		c.ThreadDst = dsts
	}
	if err := c.Validate(); err != nil {
		return pktgen.Config{}, failf(ErrInvalid, "rtt: the latency stream: %v", err)
	}
	return c, nil
}

// rttProbe runs a send's round trips: the latency stream's backend and
// the receiver that counts the returns.
type rttProbe struct {
	cfg     pktgen.Config
	backend pktgen.Backend
	thread  nsThread
	log     hclog.Logger
	// start starts the returns' receiver (startReceiver; tests replace it).
	start func(context.Context, receiver.Options) (counter, error)

	cancel context.CancelFunc
	rx     counter
	sent   chan rttSent
	// lowest is each destination's lowest round trip per second so far,
	// by address; sampled ends the sampler.
	mu      sync.Mutex
	lowest  map[netip.Addr][]uint64
	sampled chan struct{}
	done    chan struct{}
}

// rttSent is what the latency stream's backend returned.
type rttSent struct {
	sum *pktgen.Summary
	err error
}

// dsts are the latency stream's destinations, one per thread.
func (p *rttProbe) dsts() []netip.Addr {
	if len(p.cfg.ThreadDst) == 0 {
		return []netip.Addr{p.cfg.DstMin}
	}
	var out []netip.Addr
	for _, d := range p.cfg.ThreadDst {
		out = append(out, d.Addr)
	}
	return out
}

// begin starts counting the returns and hands the latency stream to its
// backend with the load's start instant at; ctx ends it (the load's run).
func (p *rttProbe) begin(ctx context.Context, at time.Time) error {
	start := p.start
	if start == nil {
		start = startReceiver
	}
	o := receiver.Options{
		Iface: p.cfg.Device, Method: receiver.MethodXDP, Clock: latency.SameHost,
		Window: rttWindow, MaxStreams: len(p.dsts()) + 8, Logger: p.log.Named("returns"),
	}
	// The receiver outlives a Stop of the run (end stops it, once the
	// frames on their way back are in): ctx's end would detach it at once.
	rxCtx := context.WithoutCancel(ctx)
	if err := p.thread.do(func() (err error) { p.rx, err = start(rxCtx, o); return err }); err != nil {
		return fmt.Errorf("count the reflected latency stream on %s: %w", p.cfg.Device, err)
	}
	cfg := p.cfg
	cfg.StartAt = at
	ctx, p.cancel = context.WithCancel(ctx)
	p.sent = make(chan rttSent, 1)
	go func() {
		sum, err := p.backend.Run(ctx, cfg, func(pktgen.Progress) {})
		p.sent <- rttSent{sum: sum, err: err}
	}()
	p.lowest, p.sampled, p.done = map[netip.Addr][]uint64{}, make(chan struct{}), make(chan struct{})
	go p.sample(at)
	return nil
}

// sample takes each destination's lowest round trip of every second from
// the returns' histograms (latency.LowestBetween), from the instant at
// until end.
func (p *rttProbe) sample(at time.Time) {
	defer close(p.done)
	prev := map[netip.Addr]latency.Histogram{}
	take := func() {
		rep := p.rx.Snapshot()
		p.mu.Lock()
		defer p.mu.Unlock()
		for _, s := range rep.Streams {
			if s.DstPort != uint16(p.cfg.UDPSrcMin) || s.Latency == nil {
				continue
			}
			before := prev[s.Src]
			if us, ok := latency.LowestBetween(&before, &s.Latency.Histogram); ok {
				p.lowest[s.Src] = append(p.lowest[s.Src], us)
			}
			prev[s.Src] = s.Latency.Histogram
		}
	}
	select {
	case <-time.After(time.Until(at)):
	case <-p.sampled:
		return
	}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
			take()
		case <-p.sampled:
			take()
			return
		}
	}
}

// end stops the latency stream, counts the returns rttDrain longer and
// says what the round trips gave.
func (p *rttProbe) end() rttOutcome {
	p.cancel()
	s := <-p.sent
	time.Sleep(rttDrain)
	close(p.sampled)
	<-p.done
	rep, err := p.rx.Stop()
	if s.err != nil || err != nil {
		return rttOutcome{err: fmt.Errorf("round trips: the latency stream: %v; its returns: %v", s.err, err)}
	}
	var out rttOutcome
	for i, dst := range p.dsts() {
		r := rttStreamResult{dst: dst, port: uint16(p.cfg.UDPSrcMin),
			returned: receiver.StreamReport{Src: dst, Dst: p.cfg.SrcMin, DstPort: uint16(p.cfg.UDPSrcMin)}}
		if s.sum != nil && i < len(s.sum.Threads) {
			r.sent = s.sum.Threads[i].Packets
		}
		for _, st := range rep.Streams {
			if st.Src == dst && st.DstPort == r.port {
				r.returned = st
			}
		}
		p.mu.Lock()
		r.lowest = p.lowest[dst]
		p.mu.Unlock()
		out.streams = append(out.streams, r)
	}
	return out
}
