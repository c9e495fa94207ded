//go:build linux

package afpacket

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/hashicorp/go-hclog"
	"golang.org/x/sys/unix"

	"github.com/linerate/linerate/pktgen"
	"github.com/linerate/linerate/pktgen/internal/engine"
)

func (b *Backend) log() hclog.Logger {
	if b.Log == nil {
		return hclog.NewNullLogger()
	}
	return b.Log
}

// Probe reports why the backend cannot send from iface, or nil: the
// interface must exist and be up, and a raw packet socket must open
// (CAP_NET_RAW). Failures wrap pktgen.ErrUnsupported, ErrNoDevice or
// ErrDeviceDown.
func (b *Backend) Probe(iface string) error {
	return engine.OnThread(b.ThreadInit, func() error {
		ifi, err := engine.Up(b.Name(), iface)
		if err != nil {
			return err
		}
		fd, err := openSocket(ifi, true)
		if err != nil {
			return err
		}
		return unix.Close(fd)
	})
}

// openSocket opens a raw packet socket bound to ifi for sending only
// (protocol 0: it receives nothing), bypassing the qdisc unless asked
// not to (xmit_mode queue_xmit: a qdisc on the sender, such as the VM
// lab's netem, then acts on every frame, as on kernel pktgen's).
func openSocket(ifi *net.Interface, bypass bool) (int, error) {
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		if errors.Is(err, unix.EPERM) {
			return -1, fmt.Errorf("afpacket backend: open a raw packet socket needs CAP_NET_RAW (root): %w: %w", pktgen.ErrUnsupported, err)
		}
		return -1, fmt.Errorf("afpacket backend: open a raw packet socket: %w", err)
	}
	fail := func(what string, err error) (int, error) {
		unix.Close(fd)
		return -1, fmt.Errorf("afpacket backend: %s on %s: %w", what, ifi.Name, err)
	}
	if err := unix.Bind(fd, &unix.SockaddrLinklayer{Ifindex: ifi.Index}); err != nil {
		return fail("bind the packet socket", err)
	}
	if bypass {
		if err := unix.SetsockoptInt(fd, unix.SOL_PACKET, unix.PACKET_QDISC_BYPASS, 1); err != nil {
			return fail("set PACKET_QDISC_BYPASS", err)
		}
	}
	// A full send buffer blocks for at most this long, so that a stop is
	// seen; the send is then retried.
	if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_SNDTIMEO, &unix.Timeval{Usec: 50_000}); err != nil {
		return fail("set SO_SNDTIMEO", err)
	}
	return fd, nil
}

type run struct {
	cfg   *pktgen.Config
	ifi   *net.Interface
	batch int
}

// Run sends cfg's frames. See the package doc.
func (b *Backend) Run(ctx context.Context, cfg pktgen.Config, progress func(pktgen.Progress)) (*pktgen.Summary, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := cfg.UserspaceCheck(b.Name()); err != nil {
		return nil, err
	}
	r := &run{cfg: &cfg, batch: b.Batch}
	if r.batch == 0 {
		r.batch = DefaultBatch
	}
	if r.batch < 1 || r.batch > 1024 {
		return nil, fmt.Errorf("afpacket backend: batch %d: want 1-1024: %w", r.batch, pktgen.ErrConfig)
	}
	err := engine.OnThread(b.ThreadInit, func() error {
		var err error
		r.ifi, err = engine.Up(b.Name(), cfg.Device)
		return err
	})
	if err != nil {
		return nil, err
	}
	// Check every thread's frame before any thread starts.
	for i := range cfg.CPUs {
		if _, err := pktgen.BuildFrame(&cfg, i, r.ifi.HardwareAddr); err != nil {
			return nil, fmt.Errorf("afpacket backend: thread %d frame: %w", i, err)
		}
	}
	return engine.Run(ctx, engine.Options{
		Backend: b.Name(), Config: &cfg, Open: r.open, Log: b.log().Named("afpacket").With("dev", cfg.Device),
		Progress: progress, Interval: b.Interval, ThreadInit: b.ThreadInit,
	})
}

// thread is one socket and its batch of frame slots.
type thread struct {
	fd     int
	dev    string
	frame  *pktgen.Frame
	bufs   [][]byte
	iovs   []unix.Iovec
	msgs   []unix.Mmsghdr
	sent   atomic.Uint64
	errors atomic.Uint64
	// first is the stamp of the first frame (read once Send returned)
	first time.Time
}

func (r *run) open(i, cpu int) (engine.Thread, error) {
	f, err := pktgen.BuildFrame(r.cfg, i, r.ifi.HardwareAddr)
	if err != nil {
		return nil, err
	}
	fd, err := openSocket(r.ifi, r.cfg.XmitMode != pktgen.XmitQueue)
	if err != nil {
		return nil, err
	}
	t := &thread{fd: fd, dev: r.ifi.Name, frame: f, bufs: make([][]byte, r.batch), iovs: make([]unix.Iovec, r.batch), msgs: make([]unix.Mmsghdr, r.batch)}
	for j := range t.bufs {
		t.bufs[j] = append([]byte(nil), f.Bytes...)
		t.iovs[j].Base = &t.bufs[j][0]
		t.iovs[j].SetLen(len(f.Bytes))
		t.msgs[j].Hdr.Iov = &t.iovs[j]
		t.msgs[j].Hdr.SetIovlen(1)
	}
	return t, nil
}

// Send stamps and sends batches until the target or a stop.
func (t *thread) Send(c *engine.Control) error {
	batch := uint64(len(t.bufs))
	var pacer *engine.Pacer
	if c.PeriodNum > 0 {
		pacer = engine.NewPacer(c.PeriodNum, c.PeriodDen, engine.DepthFor(c.PeriodNum, c.PeriodDen, engine.CatchUp, batch))
	}
	var sent uint64
	for !c.Stopped() {
		n := batch
		if c.Target > 0 {
			if sent >= c.Target {
				return nil
			}
			n = min(n, c.Target-sent)
		}
		if pacer != nil {
			k, wait := pacer.Ready(c.Now(), n)
			if k == 0 {
				c.Wait(wait)
				continue
			}
			n = k
		}
		now := time.Now()
		if sent == 0 && t.first.IsZero() {
			t.first = now
		}
		for j := range n {
			t.frame.Stamp(t.bufs[j], uint32(sent+j+1), now)
		}
		done, err := t.sendAll(c, int(n))
		sent += uint64(done)
		if pacer != nil {
			pacer.Took(uint64(done))
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// sendAll sends msgs[:n], resending what the kernel refused, until all
// went or the run stops; it returns how many went.
func (t *thread) sendAll(c *engine.Control, n int) (int, error) {
	off := 0
	for off < n {
		r, _, errno := unix.Syscall6(unix.SYS_SENDMMSG, uintptr(t.fd), uintptr(unsafe.Pointer(&t.msgs[off])), uintptr(n-off), 0, 0, 0)
		if errno == 0 {
			off += int(r)
			t.sent.Add(uint64(r))
			if off < n {
				// The kernel keeps the error that ended the batch for the
				// next call; read (and clear) it here, to count it once.
				if e, err := unix.GetsockoptInt(t.fd, unix.SOL_SOCKET, unix.SO_ERROR); err == nil && e != 0 {
					if err := t.refused(c, unix.Errno(e)); err != nil {
						return off, err
					}
				}
			}
			continue
		}
		if err := t.refused(c, errno); err != nil {
			return off, err
		}
		if c.Stopped() {
			return off, nil
		}
	}
	return off, nil
}

// refused counts a frame the kernel did not take and waits a moment, or
// returns the error when it is not one to retry.
func (t *thread) refused(c *engine.Control, errno unix.Errno) error {
	switch errno {
	case unix.EINTR:
		return nil
	case unix.ENOBUFS, unix.EAGAIN:
		t.errors.Add(1)
		c.Wait(20 * time.Microsecond)
		return nil
	}
	return fmt.Errorf("sendmmsg on %s: %w", t.dev, errno)
}

func (t *thread) Progress() (uint64, uint64) { return t.sent.Load(), t.errors.Load() }

// First is the time stamped into the first frame (engine.Firster).
func (t *thread) First() (time.Time, bool) { return t.first, !t.first.IsZero() }

// Interrupt does nothing: a blocked send returns within the send timeout by
// itself.
func (t *thread) Interrupt() {}

func (t *thread) Close() error {
	if err := unix.Close(t.fd); err != nil {
		return fmt.Errorf("close packet socket on %s: %w", t.dev, err)
	}
	return nil
}
