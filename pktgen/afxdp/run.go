package afxdp

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/linerate/linerate/internal/ethtool"
	"github.com/linerate/linerate/internal/xsk"
	"github.com/linerate/linerate/pktgen"
	"github.com/linerate/linerate/pktgen/internal/engine"
)

// Probe reports why the backend cannot send from iface, or nil: the
// interface must exist and be up, and an AF_XDP socket must bind to its
// queue 0 for transmit. Failures wrap pktgen.ErrUnsupported, ErrNoDevice
// or ErrDeviceDown.
func (b *Backend) Probe(iface string) error {
	return engine.OnThread(b.ThreadInit, func() error { return b.probe(iface) })
}

func (b *Backend) probe(iface string) error { return b.probeQueue(iface, 0) }

// ProbeQueues is Probe for a send of threads threads on queues 0 to
// threads-1, one socket each (no plan's Config.Queues): a socket must
// also bind to queue threads-1, which an interface of fewer queues
// refuses (a one-queue veth and two threads).
func (b *Backend) ProbeQueues(iface string, threads int) error {
	return engine.OnThread(b.ThreadInit, func() error {
		if err := b.probeQueue(iface, 0); err != nil || threads <= 1 {
			return err
		}
		if err := b.probeQueue(iface, threads-1); err != nil {
			return fmt.Errorf("%d threads need a socket on each of queues 0-%d: %w", threads, threads-1, err)
		}
		return nil
	})
}

func (b *Backend) probeQueue(iface string, q int) error {
	ifi, err := engine.Up(b.Name(), iface)
	if err != nil {
		return err
	}
	s, err := xsk.Open(xsk.Options{Ifindex: ifi.Index, Queue: q, TX: true, RingSize: 64, Mode: b.Mode})
	if err != nil {
		return fmt.Errorf("afxdp backend: %s queue %d: %w: %w", iface, q, pktgen.ErrUnsupported, err)
	}
	return s.Close()
}

// run is one Run's shared state: the interface, the wakeup choice, and
// the threads' sockets once open.
type run struct {
	cfg       *pktgen.Config
	ifi       *net.Interface
	batch     int
	ringSize  int
	mode      xsk.Mode
	wakeup    bool
	wakeWhy   string
	frameSize int
	threads   []*thread
}

// Run sends cfg's frames. See the package doc.
func (b *Backend) Run(ctx context.Context, cfg pktgen.Config, progress func(pktgen.Progress)) (*pktgen.Summary, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := cfg.UserspaceCheck(b.Name()); err != nil {
		return nil, err
	}
	r := &run{cfg: &cfg, batch: b.Batch, ringSize: b.RingSize, mode: b.Mode, threads: make([]*thread, len(cfg.CPUs))}
	if r.ringSize == 0 {
		r.ringSize = xsk.DefaultRingSize
	}
	if r.batch == 0 {
		r.batch = DefaultBatch
	}
	if r.batch < 1 || r.batch > r.ringSize {
		return nil, fmt.Errorf("afxdp backend: batch %d: want 1-%d (the ring size): %w", r.batch, r.ringSize, pktgen.ErrConfig)
	}
	err := engine.OnThread(b.ThreadInit, func() error {
		var err error
		if r.ifi, err = engine.Up(b.Name(), cfg.Device); err != nil {
			return err
		}
		virtual, why := true, "its driver is unknown"
		if rd, err := ethtool.Open(cfg.Device); err == nil {
			info, err := rd.Info()
			rd.Close()
			if err == nil {
				virtual, why = xsk.Virtual(info.Driver, info.BusInfo)
			} else {
				why = fmt.Sprintf("its driver is unknown (%v)", err)
			}
		}
		r.wakeup, r.wakeWhy = cfg.NeedWakeup.Choose(virtual, cfg.Device+"'s "+why)
		return nil
	})
	if err != nil {
		return nil, err
	}
	// Check every thread's frame before any thread starts; the chunk
	// holds the largest.
	r.frameSize = xsk.DefaultFrameSize
	for i := range cfg.CPUs {
		f, err := pktgen.BuildFrame(&cfg, i, r.ifi.HardwareAddr)
		if err != nil {
			return nil, fmt.Errorf("afxdp backend: thread %d frame: %w", i, err)
		}
		if len(f.Bytes) > xsk.DefaultFrameSize {
			r.frameSize = xsk.MaxFrameSize
		}
		if len(f.Bytes) > xsk.MaxFrameSize {
			return nil, fmt.Errorf("afxdp backend: pkt_size %d: want at most %d (a UMEM frame): %w", len(f.Bytes), xsk.MaxFrameSize, pktgen.ErrConfig)
		}
	}
	log := hclog.NewNullLogger()
	if b.Log != nil {
		log = b.Log.Named("afxdp").With("dev", cfg.Device)
	}
	sum, err := engine.Run(ctx, engine.Options{
		Backend: b.Name(), Config: &cfg, Open: r.open, Log: log,
		Progress: progress, Interval: b.Interval, ThreadInit: b.ThreadInit,
	})
	if err != nil {
		return nil, err
	}
	r.describe(sum, log)
	return sum, nil
}

// queueOf is thread i's TX queue: the plan's (Config.Queues), else the
// thread's index.
func (r *run) queueOf(i int) int {
	if q, ok := r.cfg.QueueOf(i); ok {
		return q
	}
	return i
}

// describe puts in the summary each thread's queue, the sockets' mode and
// need_wakeup with why, and a warning for a kernel that refused
// need_wakeup or frames the driver dropped.
func (r *run) describe(sum *pktgen.Summary, log hclog.Logger) {
	modes := map[string][]string{}
	var order []string
	var fallback error
	var dropped uint64
	for i, t := range r.threads {
		if t == nil || i >= len(sum.Threads) {
			continue
		}
		q := t.queue
		sum.Threads[i].Queue = &q
		m, why := t.s.Mode()
		key := fmt.Sprintf("%s mode: %s", m, why)
		if _, ok := modes[key]; !ok {
			order = append(order, key)
		}
		modes[key] = append(modes[key], fmt.Sprint(q))
		if err := t.s.WakeupFallback(); err != nil && fallback == nil {
			fallback = err
		}
		dropped += t.dropped.Load()
	}
	for _, key := range order {
		sum.Notes = append(sum.Notes, fmt.Sprintf("AF_XDP %s (queues %s)", key, strings.Join(modes[key], ", ")))
	}
	note := r.wakeWhy
	if t := r.threads[0]; t != nil {
		_, why := t.s.NeedWakeup()
		note += "; " + why
	}
	if fallback != nil {
		note = "need_wakeup off: " + fallback.Error()
		sum.Warnings = append(sum.Warnings, fmt.Sprintf("%s: %v: every batch costs a syscall (a kernel before 5.4?)", r.cfg.Device, fallback))
	}
	sum.Notes = append(sum.Notes, note)
	if dropped > 0 {
		sum.Warnings = append(sum.Warnings, fmt.Sprintf("%s's driver dropped %d frames it was given (NET_XMIT_DROP: a full queue, a veth peer's full backlog): they count as sent and, through the device's tx_dropped, as lost in the sender host", r.cfg.Device, dropped))
	}
	log.Info("AF_XDP sockets", "notes", sum.Notes)
}

// thread is one socket on one TX queue, its UMEM frames and its stream.
type thread struct {
	s      *xsk.Socket
	queue  int
	dev    string
	frame  *pktgen.Frame
	length int
	batch  int
	// free are the UMEM addresses of frames the thread may stamp; done
	// is the buffer completions are read into.
	free, done []uint64
	// inflight counts descriptors submitted and not yet completed.
	inflight int
	// completed counts frames the kernel gave back, each a packet sent;
	// dropped those of them the driver dropped (Kick's EBUSY).
	completed atomic.Uint64
	dropped   atomic.Uint64
	first     time.Time
}

// open binds thread i's socket to its queue and fills its UMEM with the
// thread's template.
func (r *run) open(i, cpu int) (engine.Thread, error) {
	q := r.queueOf(i)
	f, err := pktgen.BuildFrame(r.cfg, i, r.ifi.HardwareAddr)
	if err != nil {
		return nil, err
	}
	s, err := xsk.Open(xsk.Options{Ifindex: r.ifi.Index, Queue: q, TX: true, RingSize: r.ringSize, FrameSize: r.frameSize, Mode: r.mode, NeedWakeup: r.wakeup})
	if err != nil {
		return nil, fmt.Errorf("afxdp backend: %s queue %d: %w", r.ifi.Name, q, err)
	}
	// In copy mode a kick sends at most 32 frames unless the socket's
	// budget (6.17+) is raised; a kernel without the option keeps 32.
	if m, _ := s.Mode(); m == xsk.ModeCopy {
		_ = s.SetTxBudget(r.ringSize)
	}
	n := s.Options().Frames
	t := &thread{s: s, queue: q, dev: r.ifi.Name, frame: f, length: len(f.Bytes), batch: r.batch,
		free: make([]uint64, 0, n), done: make([]uint64, r.ringSize)}
	// Every frame holds the template; per frame only what Stamp changes
	// is written.
	for j := range n {
		a := s.FrameAddr(j)
		copy(s.Frame(a), f.Bytes)
		t.free = append(t.free, a)
	}
	r.threads[i] = t
	return t, nil
}

// Send stamps, submits and kicks batches until the target or a stop,
// then waits for the kernel to complete every frame it was given.
func (t *thread) Send(c *engine.Control) error {
	batch := uint64(t.batch)
	var pacer *engine.Pacer
	if c.PeriodNum > 0 {
		pacer = engine.NewPacer(c.PeriodNum, c.PeriodDen, engine.DepthFor(c.PeriodNum, c.PeriodDen, engine.CatchUp, batch))
	}
	var next uint64 // sequence numbers stamped so far
	var deadline time.Time
	for {
		if err := t.reclaim(); err != nil {
			return err
		}
		pending := uint64(0)
		if !c.Stopped() {
			pending = batch
			if c.Target > 0 {
				pending = c.Target - next
			}
		}
		if pending == 0 {
			// Done or stopped: wait for the kernel to complete what it
			// was given, at most a second.
			if t.inflight == 0 {
				return nil
			}
			if deadline.IsZero() {
				deadline = time.Now().Add(time.Second)
			} else if time.Now().After(deadline) {
				st, _ := t.s.Stats()
				return fmt.Errorf("send on %s queue %d: %d frames submitted were not completed within a second (socket statistics %+v)", t.dev, t.queue, t.inflight, st)
			}
			continue
		}
		n := min(pending, batch, uint64(len(t.free)))
		if pacer != nil && n > 0 {
			k, wait := pacer.Ready(c.Now(), n)
			if k == 0 {
				c.Wait(wait)
				continue
			}
			n = k
		}
		k := t.s.TxReserve(int(n))
		if k == 0 {
			// Ring or frames exhausted: the next reclaim's kick frees
			// them (a zero-copy driver completes by itself).
			continue
		}
		now := time.Now()
		if t.first.IsZero() {
			t.first = now
		}
		for j := range k {
			a := t.free[len(t.free)-1-j]
			next++
			t.frame.Stamp(t.s.Bytes(a, t.length), uint32(next), now)
			t.s.TxSet(j, a, t.length)
		}
		t.free = t.free[:len(t.free)-k]
		t.s.TxSubmit(k)
		t.inflight += k
		if pacer != nil {
			pacer.Took(uint64(k))
		}
	}
}

// reclaim kicks the kernel when the TX ring asks for it and takes back
// completed frames: each is a packet sent. A kick that reports a drop
// (the driver's NET_XMIT_DROP: in copy mode the kernel completes the
// frame and returns EBUSY) is counted: the frame went to the device, which
// dropped it and counts it in tx_dropped, so the books find it lost in
// the sender host. It cannot be sent again as pktgen would: the
// completion ring does not say which frame it was.
func (t *thread) reclaim() error {
	dropped := false
	if t.inflight > 0 && t.s.NeedsWakeup(xsk.TX) {
		var err error
		if dropped, err = t.s.Kick(); err != nil {
			return fmt.Errorf("send on %s queue %d: %w", t.dev, t.queue, err)
		}
	}
	if dropped {
		t.dropped.Add(1)
	}
	n := t.s.Complete(t.done)
	if n == 0 {
		return nil
	}
	t.completed.Add(uint64(n))
	t.free = append(t.free, t.done[:n]...)
	t.inflight -= n
	return nil
}

// Progress is the frames sent (completed) and no errors: the kernel
// refuses nothing for the thread to send again (a busy queue leaves the
// descriptor in the ring for the next kick).
func (t *thread) Progress() (uint64, uint64) { return t.completed.Load(), 0 }

// First is the time stamped into the first frame (engine.Firster).
func (t *thread) First() (time.Time, bool) { return t.first, !t.first.IsZero() }

// Interrupt does nothing: the send loop never blocks (every kick is
// MSG_DONTWAIT) and sees the stop itself.
func (t *thread) Interrupt() {}

func (t *thread) Close() error {
	if err := t.s.Close(); err != nil {
		return fmt.Errorf("close AF_XDP socket on %s queue %d: %w", t.dev, t.queue, err)
	}
	return nil
}
