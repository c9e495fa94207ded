//go:build linux

package receiver

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"golang.org/x/sys/unix"

	"github.com/linerate/linerate/internal/xsk"
)

// afxdpBatch is how many descriptors a reader takes off its RX ring at a
// time, and the frames it gives back to the fill ring at a time.
const afxdpBatch = 64

// afxdpIdle is how long a reader waits in poll() when its RX ring is
// empty and the kernel does not ask for a wakeup: the reader's idle
// sleep, woken as soon as a frame arrives.
const afxdpIdle = 100 * time.Millisecond

// afxdpSpins is how many times a reader with need_wakeup finds its RX ring
// empty in a row, without the kernel asking for a wakeup, before it
// sleeps in poll() (idle); under load it never makes a syscall unless
// the fill ring asks.
const afxdpSpins = 1024

// afxdpUMEM is the UMEM the afxdp method's sockets share out, in all:
// each socket's rings are as large as that allows (afxdpRing), so that a
// reader the machine deschedules for a while loses nothing: with one
// queue, 16384 descriptors (5 ms at 3 Mpps, what a veth's copy mode
// delivers here) and 32768 frames of 2048 bytes.
const afxdpUMEM = 64 << 20

// afxdpRing is the ring size of each of queues sockets with chunks of
// frameSize bytes: the largest power of two from xsk.DefaultRingSize to
// 16384 whose 2 × ring frames (xsk.DefaultFrames) per socket fit
// afxdpUMEM. The floor, xsk.DefaultRingSize, takes more than afxdpUMEM
// from 8 queues of 2048-byte chunks up: 8 MiB a socket.
func afxdpRing(queues, frameSize int) int {
	n := xsk.DefaultRingSize
	for n < 16384 && 2*(2*n)*frameSize*max(queues, 1) <= afxdpUMEM {
		n *= 2
	}
	return n
}

// afxdpDrain is how long a stopping reader goes on reading after the
// redirect program was detached: frames already on its RX ring.
const afxdpDrain = 30 * time.Millisecond

// afxdpMethod counts with one AF_XDP socket per receive queue of the
// interface (xsk), an XDP program that redirects each test frame to the
// socket of the queue it arrived on (redirector) and passes every other
// frame to the stack, and one reader per socket, pinned to that queue's
// CPU, counting into its own fork of one Table: per-queue counters,
// sequence windows shared by all queues (so duplicates across queues are
// exact), as the AF_PACKET method's rings. Stop merges the counters.
type afxdpMethod struct {
	o      Options
	log    hclog.Logger
	base   *Table
	redir  *redirector
	clk    bpfClock // what the redirect program stamps arrivals on
	queues []*xskQueue
	done   chan struct{} // closed to stop the readers
	wg     sync.WaitGroup
	once   sync.Once
}

// xskQueue is one receive queue's socket and its reader's table.
type xskQueue struct {
	q, cpu int
	s      *xsk.Socket
	wakeup bool // bound with need_wakeup: poll() only when the fill ring asks
	free   []uint64

	mu    sync.Mutex // guards tab and drops
	tab   *Table
	drops uint64 // XDP_STATISTICS rx_dropped + rx_ring_full, read at the end
}

// afxdpSetup is what startAFXDP needs beyond Options: the interface, its
// receive queues and the CPU of each queue's reader, the socket mode and
// need_wakeup as chosen (with why).
type afxdpSetup struct {
	ifindex, queues int
	cpus            []int // queue q's reader runs on cpus[q%len(cpus)]
	mode            xsk.Mode
	wakeup          bool
	frameSize       int // the UMEM's chunk size (afxdpFrameSize)
}

// startAFXDP opens a socket on every receive queue (a queue past the
// driver's queues in use ends the list), puts them in the XSKMAP,
// attaches the redirect program and starts the readers. It must run in
// the interface's network namespace.
func startAFXDP(o Options, st afxdpSetup) (_ *afxdpMethod, mode, detail string, err error) {
	a := &afxdpMethod{o: o, log: o.Logger, base: newTable(o), done: make(chan struct{})}
	defer func() {
		if err != nil {
			a.close()
		}
	}()
	a.clk = bpfClocks()
	if a.redir, err = loadRedirector(st.queues, a.clk, a.log); err != nil {
		return nil, "", "", err
	}
	for q := 0; q < st.queues; q++ {
		s, err := xsk.Open(xsk.Options{Ifindex: st.ifindex, Queue: q, Mode: st.mode, NeedWakeup: st.wakeup, RX: true, RingSize: afxdpRing(st.queues, st.frameSize), FrameSize: st.frameSize})
		if err != nil {
			if q > 0 && errors.Is(err, unix.EINVAL) {
				// The driver uses fewer queues than the interface has
				// (ethtool -L): the first it refuses ends them.
				a.log.Debug("afxdp: the driver refused a socket on this queue: its queues in use end here", "queue", q, "error", err)
				break
			}
			return nil, "", "", fmt.Errorf("afxdp: open a socket on queue %d: %w", q, err)
		}
		xq := &xskQueue{q: q, cpu: st.cpus[q%len(st.cpus)], s: s, tab: a.base.Fork()}
		xq.wakeup, _ = s.NeedWakeup()
		a.queues = append(a.queues, xq)
		if err := a.redir.add(q, s.FD()); err != nil {
			return nil, "", "", err
		}
		if fb := s.WakeupFallback(); fb != nil && q == 0 {
			a.log.Warn("afxdp: need_wakeup asked for, but "+fb.Error(), "iface", o.Iface)
		}
		xq.fill()
	}
	if mode, detail, err = a.redir.attach(st.ifindex); err != nil {
		return nil, "", "", err
	}
	for _, xq := range a.queues {
		a.wg.Add(1)
		go func() {
			defer a.wg.Done()
			xq.run(a.done, a.clk, a.log)
		}()
	}
	return a, mode, detail, nil
}

// sockets says the first socket's mode and need_wakeup, and why: every
// socket of the method is bound alike.
func (a *afxdpMethod) sockets() (mode xsk.Mode, modeWhy string, wakeup bool, wakeWhy string) {
	if len(a.queues) == 0 {
		return "", "", false, ""
	}
	s := a.queues[0].s
	mode, modeWhy = s.Mode()
	wakeup, wakeWhy = s.NeedWakeup()
	return mode, modeWhy, wakeup, wakeWhy
}

// fill gives the kernel every frame of the UMEM the fill ring takes and
// keeps the rest as free frames.
func (xq *xskQueue) fill() {
	o := xq.s.Options()
	for i := o.Frames - 1; i >= 0; i-- {
		xq.free = append(xq.free, xq.s.FrameAddr(i))
	}
	xq.refill()
}

// refill gives the fill ring as many free frames as it takes, from the
// end of the free list (a stack: nothing but what the ring did not take
// moves).
func (xq *xskQueue) refill() {
	for len(xq.free) > 0 {
		from := max(0, len(xq.free)-afxdpBatch*4)
		n := xq.s.Fill(xq.free[from:])
		kept := copy(xq.free[from:], xq.free[from+n:])
		xq.free = xq.free[:from+kept]
		if kept > 0 || n == 0 {
			return // the ring is full
		}
	}
}

// run reads the RX ring until done is closed, then for afxdpDrain more
// (frames redirected before the program was detached), then reads the
// socket's statistics. Its thread is pinned to the queue's CPU.
//
// With need_wakeup the reader makes a syscall only when the fill ring
// asks (poll(), which also waits for frames), and sleeps in poll() only
// after afxdpSpins empty looks; without it (a virtual device, where the
// kernel delivers in the sender's softirq and never needs one) it waits
// in poll() whenever the ring is empty. A frame's arrival is the stamp
// the redirect program wrote in its metadata (the xdp method's clock,
// bpfClock, as the frame came in, turned into Unix time with the clock's
// offset, read again every clk.every); a frame without one (a driver without XDP
// metadata) takes the realtime clock read as its batch was taken off the
// ring, late by the reader's wait.
func (xq *xskQueue) run(done <-chan struct{}, clk bpfClock, log hclog.Logger) {
	pinThread(xq.cpu, "afxdp", log)
	descs := make([]xsk.Desc, afxdpBatch)
	size := uint64(xq.s.Options().FrameSize)
	var drainUntil, offAt time.Time
	var off int64 // clk's offset to Unix ns, read again every clk.every
	offWarned := false
	empty := 0
	for {
		n := xq.s.Receive(descs)
		if n > 0 {
			empty = 0
			t := time.Now()
			now := uint64(t.UnixNano())
			if t.Sub(offAt) >= clk.every {
				// A failed read is tried again after clk.every, as a
				// good one is, and warned of once: not every batch.
				o, err := clk.offset()
				switch {
				case err == nil:
					off = o
				case !offWarned:
					offWarned = true
					log.Warn("afxdp: delays may drift: the clock offset was not read", "queue", xq.q, "error", err)
				}
				offAt = t
			}
			xq.mu.Lock()
			for _, d := range descs[:n] {
				xq.tab.frameNs = now
				if d.Addr%size >= stampLen {
					// The redirect program's stamp, cleared once read
					// (the frame is used again).
					meta := xq.s.Bytes(d.Addr-stampLen, stampLen)
					if binary.NativeEndian.Uint64(meta[8:]) == stampMagic {
						xq.tab.frameNs = uint64(int64(binary.NativeEndian.Uint64(meta)) + off)
						binary.NativeEndian.PutUint64(meta[8:], 0)
					}
				}
				xq.tab.Add(xq.s.Bytes(d.Addr, int(d.Len)))
				xq.free = append(xq.free, d.Addr-d.Addr%size)
			}
			xq.mu.Unlock()
			xq.s.Release(n)
			xq.refill()
			continue
		}
		if drainUntil.IsZero() {
			select {
			case <-done:
				drainUntil = time.Now().Add(afxdpDrain)
			default:
			}
		} else if time.Now().After(drainUntil) {
			break
		}
		empty++
		wait := afxdpIdle
		if !drainUntil.IsZero() {
			wait = time.Millisecond
		}
		switch {
		case xq.s.NeedsWakeup(xsk.Fill):
			// The kernel asks (need_wakeup) or always needs (without it)
			// a syscall to go on filling the ring: poll() is it.
		case empty < afxdpSpins:
			continue
		}
		if _, err := xq.s.Poll(wait); err != nil {
			log.Error("afxdp: poll", "queue", xq.q, "error", err)
			time.Sleep(time.Millisecond)
		}
	}
	xq.readStats(log)
}

// readStats adds the socket's frames the kernel had for it but no room
// for (XDP_STATISTICS: rx_dropped, no UMEM frame; rx_ring_full, no RX
// ring slot): the method's ring drops.
func (xq *xskQueue) readStats(log hclog.Logger) {
	st, err := xq.s.Stats()
	if err != nil {
		log.Warn("afxdp: read the socket's statistics", "queue", xq.q, "error", err)
		return
	}
	xq.mu.Lock()
	xq.drops = st.RxDropped + st.RxRingFull
	xq.mu.Unlock()
	log.Debug("afxdp: socket statistics", "queue", xq.q, "rx_dropped", st.RxDropped, "rx_ring_full", st.RxRingFull, "fill_ring_empty", st.FillRingEmpty)
	if st.RxInvalid > 0 {
		log.Warn("afxdp: the kernel found invalid descriptors on the fill ring", "queue", xq.q, "count", st.RxInvalid)
	}
}

func (a *afxdpMethod) snapshot() (counts, error) {
	sum := a.base.Fork()
	var c counts
	for _, xq := range a.queues {
		xq.mu.Lock()
		sum.Merge(xq.tab)
		c.ringDrops += xq.drops
		xq.mu.Unlock()
	}
	c.streams, c.other, c.overflow = sum.counts(false, a.o.MaxRanges)
	other, err := a.redir.others()
	c.other += other
	return c, err
}

// stop detaches the redirect program, stops the readers once they have
// drained their rings and merges their counters, with each stream's
// packets per queue (the queue's reader counted them).
func (a *afxdpMethod) stop() (counts, error) {
	derr := a.redir.detach()
	a.signal()
	a.wg.Wait()
	var c counts
	final := a.base
	type streamID struct {
		src, dst netip.Addr
		port     uint16
	}
	perQueue := map[streamID][]QueuePackets{}
	for _, xq := range a.queues {
		final.Merge(xq.tab)
		c.ringDrops += xq.drops
		for _, s := range xq.tab.streams {
			src, dst := s.key.addrs()
			id := streamID{src, dst, s.key.port}
			perQueue[id] = append(perQueue[id], QueuePackets{Queue: uint32(xq.q), Packets: s.Received})
		}
	}
	c.streams, c.other, c.overflow = final.counts(true, a.o.MaxRanges)
	other, oerr := a.redir.others()
	c.other += other
	for i := range c.streams {
		s := &c.streams[i]
		s.Queues = perQueue[streamID{s.Src, s.Dst, s.DstPort}]
	}
	return c, errors.Join(derr, oerr)
}

func (a *afxdpMethod) signal() { a.once.Do(func() { close(a.done) }) }

// close detaches, stops the readers and closes the sockets, the map and
// the program; safe after stop and on its own.
func (a *afxdpMethod) close() error {
	var errs []error
	if a.redir != nil {
		errs = append(errs, a.redir.detach())
	}
	a.signal()
	a.wg.Wait()
	for _, xq := range a.queues {
		errs = append(errs, xq.s.Close())
	}
	a.queues = nil
	if a.redir != nil {
		errs = append(errs, a.redir.close())
		a.redir = nil
	}
	return errors.Join(errs...)
}
