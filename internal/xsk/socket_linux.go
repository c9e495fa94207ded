//go:build linux

package xsk

import (
	"errors"
	"fmt"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Socket is one bound AF_XDP socket and its UMEM. Its ring methods are
// for one goroutine at a time (the rings are single-producer,
// single-consumer); FD, Mode, NeedWakeup and Stats may be called from
// any.
type Socket struct {
	fd       int
	opts     Options
	umem     []byte
	fill     *ring
	comp     *ring
	rx       *ring
	tx       *ring
	mode     Mode
	modeWhy  string
	wakeup   bool
	wakeWhy  string
	fallback error
	// reserved is how many TX or fill slots the last reserve took.
	reserved uint32
}

// Open makes, sizes and binds the socket o asks for (see the package
// doc for the defaults and the order of attempts). The error of a bind
// the kernel refused names the interface index, the queue and the mode.
func Open(o Options) (*Socket, error) {
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	umem, err := unix.Mmap(-1, 0, o.Frames*o.FrameSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_POPULATE)
	if err != nil {
		return nil, fmt.Errorf("AF_XDP: mmap a UMEM of %d frames of %d bytes: %w", o.Frames, o.FrameSize, err)
	}
	modes := []Mode{o.Mode}
	if o.Mode == ModeAuto {
		modes = []Mode{ModeZeroCopy, ModeCopy}
	}
	var zcErr error
	for _, m := range modes {
		s, err := openWaiting(o, umem, m)
		if err == nil {
			s.mode = m
			switch {
			case o.Mode != ModeAuto:
				s.modeWhy = fmt.Sprintf("%s asked for", m)
			case m == ModeZeroCopy:
				s.modeWhy = "the driver bound XDP_ZEROCOPY"
			default:
				s.modeWhy = fmt.Sprintf("the driver refused zero-copy (%v)", zcErr)
			}
			s.confirmMode()
			return s, nil
		}
		if m == ModeZeroCopy && o.Mode == ModeAuto && isRefusal(err) {
			zcErr = errors.Unwrap(err)
			continue
		}
		unix.Munmap(umem)
		return nil, err
	}
	panic("unreachable")
}

// busyWait is how long Open waits for a queue that is busy (EBUSY) to be
// released: the kernel frees a closed socket's hold on its queue in
// deferred work (after an RCU grace period, under the rtnl lock), some
// 10-20 ms after close here, so a socket opened right after another on
// the same queue closed (a probe, then the run) finds it busy at first.
const busyWait = time.Second

// openWaiting is open, retried while the queue is busy, up to busyWait.
func openWaiting(o Options, umem []byte, m Mode) (*Socket, error) {
	deadline := time.Now().Add(busyWait)
	for {
		s, err := open(o, umem, m)
		if err == nil || !errors.Is(err, unix.EBUSY) {
			return s, err
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("%w (another AF_XDP socket holds the queue: waited %v for it to be released)", err, busyWait)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// isRefusal tells a driver's refusal of zero-copy (to try copy mode
// next) from a bind that no mode will fix (no such queue, busy, …).
func isRefusal(err error) bool {
	return errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.EINVAL) || errors.Is(err, unix.EPROTONOSUPPORT)
}

// open binds a socket in mode m, with need_wakeup as o asks and without
// it when the kernel refuses the flag.
func open(o Options, umem []byte, m Mode) (*Socket, error) {
	flags := uint16(unix.XDP_COPY)
	if m == ModeZeroCopy {
		flags = unix.XDP_ZEROCOPY
	}
	if !o.NeedWakeup {
		s, err := bind(o, umem, m, flags)
		if s != nil {
			s.wakeWhy = "not asked for"
		}
		return s, err
	}
	s, err := bind(o, umem, m, flags|unix.XDP_USE_NEED_WAKEUP)
	if err == nil {
		s.wakeup, s.wakeWhy = true, "bound with XDP_USE_NEED_WAKEUP"
		return s, nil
	}
	if !errors.Is(err, unix.EINVAL) && !errors.Is(err, errNoFlags) {
		return nil, err
	}
	s, err2 := bind(o, umem, m, flags)
	if err2 != nil {
		// The flag was not the cause: the first error says what was.
		return nil, err
	}
	s.fallback = fmt.Errorf("the kernel refused XDP_USE_NEED_WAKEUP (%w); bound without it", errors.Unwrap(err))
	s.wakeWhy = s.fallback.Error()
	return s, nil
}

// errNoFlags is a kernel whose rings have no flags word (before 5.4):
// it cannot do need_wakeup.
var errNoFlags = errors.New("the kernel's rings have no flags word")

// bind makes one socket over umem and binds it with flags; on an error
// everything but umem is undone.
func bind(o Options, umem []byte, m Mode, flags uint16) (_ *Socket, err error) {
	s := &Socket{fd: -1, opts: o, umem: umem}
	defer func() {
		if err != nil && s.fd >= 0 {
			s.closeRings()
			unix.Close(s.fd)
		}
	}()
	if s.fd, err = unix.Socket(unix.AF_XDP, unix.SOCK_RAW|unix.SOCK_CLOEXEC, 0); err != nil {
		return nil, fmt.Errorf("AF_XDP: open a socket (needs CAP_NET_RAW and a kernel with AF_XDP): %w", err)
	}
	fd := s.fd
	what := fmt.Sprintf("ifindex %d queue %d (%s)", o.Ifindex, o.Queue, m)
	reg := unix.XDPUmemReg{Addr: uint64(uintptr(unsafe.Pointer(&umem[0]))), Len: uint64(len(umem)), Size: uint32(o.FrameSize)}
	// Kernels before 6.8 know the struct without tx_metadata_len.
	if err := setsockopt(fd, unix.XDP_UMEM_REG, unsafe.Pointer(&reg), unsafe.Offsetof(reg.Tx_metadata_len)); err != nil {
		return nil, fmt.Errorf("AF_XDP: register the UMEM (%d × %d bytes) for %s: %w", o.Frames, o.FrameSize, what, err)
	}
	size := uint32(o.RingSize)
	rings := []struct {
		opt  int
		want bool
		name string
	}{
		// The kernel binds only with both UMEM rings, whatever the
		// directions.
		{unix.XDP_UMEM_FILL_RING, true, "fill"},
		{unix.XDP_UMEM_COMPLETION_RING, true, "completion"},
		{unix.XDP_RX_RING, o.RX, "rx"},
		{unix.XDP_TX_RING, o.TX, "tx"},
	}
	for _, r := range rings {
		if !r.want {
			continue
		}
		if err := setsockopt(fd, r.opt, unsafe.Pointer(&size), 4); err != nil {
			return nil, fmt.Errorf("AF_XDP: size the %s ring (%d) for %s: %w", r.name, size, what, err)
		}
	}
	off, hasFlags, err := mmapOffsets(fd)
	if err != nil {
		return nil, fmt.Errorf("AF_XDP: read the ring offsets for %s: %w", what, err)
	}
	if flags&unix.XDP_USE_NEED_WAKEUP != 0 && !hasFlags {
		return nil, fmt.Errorf("AF_XDP: need_wakeup on %s: %w", what, errNoFlags)
	}
	flagged := flags&unix.XDP_USE_NEED_WAKEUP != 0
	n := o.RingSize
	if s.fill, err = mapRing(fd, unix.XDP_UMEM_PGOFF_FILL_RING, off.Fr, n, 8, flagged); err != nil {
		return nil, fmt.Errorf("AF_XDP: map the fill ring for %s: %w", what, err)
	}
	if s.comp, err = mapRing(fd, unix.XDP_UMEM_PGOFF_COMPLETION_RING, off.Cr, n, 8, false); err != nil {
		return nil, fmt.Errorf("AF_XDP: map the completion ring for %s: %w", what, err)
	}
	descSize := int(unsafe.Sizeof(unix.XDPDesc{}))
	if o.RX {
		if s.rx, err = mapRing(fd, unix.XDP_PGOFF_RX_RING, off.Rx, n, descSize, false); err != nil {
			return nil, fmt.Errorf("AF_XDP: map the rx ring for %s: %w", what, err)
		}
	}
	if o.TX {
		if s.tx, err = mapRing(fd, unix.XDP_PGOFF_TX_RING, off.Tx, n, descSize, flagged); err != nil {
			return nil, fmt.Errorf("AF_XDP: map the tx ring for %s: %w", what, err)
		}
	}
	if err := unix.Bind(fd, &unix.SockaddrXDP{Flags: flags, Ifindex: uint32(o.Ifindex), QueueID: uint32(o.Queue)}); err != nil {
		hint := ""
		if errors.Is(err, unix.EINVAL) {
			hint = " (does the interface have that queue?)"
		}
		return nil, fmt.Errorf("AF_XDP: bind to %s%s: %w", what, hint, err)
	}
	return s, nil
}

// mmapOffsets reads XDP_MMAP_OFFSETS; hasFlags is false on a kernel
// whose answer is the older, shorter layout without the flags words.
func mmapOffsets(fd int) (unix.XDPMmapOffsets, bool, error) {
	var off unix.XDPMmapOffsets
	n, err := getsockopt(fd, unix.XDP_MMAP_OFFSETS, unsafe.Pointer(&off), unsafe.Sizeof(off))
	if err != nil {
		return off, false, err
	}
	if n == unsafe.Sizeof(off) {
		return off, true, nil
	}
	// The older layout is four rings of producer, consumer and desc.
	var v1 [4][3]uint64
	if n != unsafe.Sizeof(v1) {
		return off, false, fmt.Errorf("XDP_MMAP_OFFSETS answered %d bytes, want %d or %d", n, unsafe.Sizeof(off), unsafe.Sizeof(v1))
	}
	v1 = *(*[4][3]uint64)(unsafe.Pointer(&off))
	rs := []*unix.XDPRingOffset{&off.Rx, &off.Tx, &off.Fr, &off.Cr}
	for i, r := range rs {
		*r = unix.XDPRingOffset{Producer: v1[i][0], Consumer: v1[i][1], Desc: v1[i][2]}
	}
	return off, false, nil
}

// confirmMode reads the bound mode back from XDP_OPTIONS (5.3+), which
// is what the kernel did rather than what was asked.
func (s *Socket) confirmMode() {
	var v uint32
	if _, err := getsockopt(s.fd, unix.XDP_OPTIONS, unsafe.Pointer(&v), 4); err != nil {
		s.modeWhy += "; the kernel has no XDP_OPTIONS to confirm it"
		return
	}
	got := ModeCopy
	if v&unix.XDP_OPTIONS_ZEROCOPY != 0 {
		got = ModeZeroCopy
	}
	if got != s.mode {
		s.modeWhy = fmt.Sprintf("XDP_OPTIONS says %s where %s was bound", got, s.mode)
		s.mode = got
	}
}

func setsockopt(fd, opt int, p unsafe.Pointer, n uintptr) error {
	_, _, e := unix.Syscall6(unix.SYS_SETSOCKOPT, uintptr(fd), unix.SOL_XDP, uintptr(opt), uintptr(p), n, 0)
	if e != 0 {
		return e
	}
	return nil
}

func getsockopt(fd, opt int, p unsafe.Pointer, n uintptr) (uintptr, error) {
	l := uint32(n)
	_, _, e := unix.Syscall6(unix.SYS_GETSOCKOPT, uintptr(fd), unix.SOL_XDP, uintptr(opt), uintptr(p), uintptr(unsafe.Pointer(&l)), 0)
	if e != 0 {
		return 0, e
	}
	return uintptr(l), nil
}

// FD is the socket's file descriptor (for an XSKMAP entry, or poll).
func (s *Socket) FD() int { return s.fd }

// Options are the socket's options with their defaults filled in.
func (s *Socket) Options() Options { return s.opts }

// Mode is copy or zerocopy, and why.
func (s *Socket) Mode() (Mode, string) { return s.mode, s.modeWhy }

// NeedWakeup is whether the socket was bound with XDP_USE_NEED_WAKEUP,
// and why (or why not).
func (s *Socket) NeedWakeup() (bool, string) { return s.wakeup, s.wakeWhy }

// WakeupFallback is non-nil when need_wakeup was asked for and the kernel
// refused it, so that the socket was bound without it: the caller's
// warning.
func (s *Socket) WakeupFallback() error { return s.fallback }

// Frame is the UMEM from addr to the end of its frame.
func (s *Socket) Frame(addr uint64) []byte {
	end := addr - addr%uint64(s.opts.FrameSize) + uint64(s.opts.FrameSize)
	return s.umem[addr:end:end]
}

// Bytes is the n bytes of the UMEM at addr (a descriptor's frame).
func (s *Socket) Bytes(addr uint64, n int) []byte { return s.umem[addr : addr+uint64(n)] }

// FrameAddr is the UMEM address of frame i (0 ≤ i < Frames).
func (s *Socket) FrameAddr(i int) uint64 { return uint64(i) * uint64(s.opts.FrameSize) }

// NeedsWakeup reports whether the kernel asked for a syscall to go on
// with ring r: the fill ring's flag (Wakeup or Poll) and the TX ring's
// (Kick). Without need_wakeup the fill and TX rings always need one; the
// completion and RX rings never do.
func (s *Socket) NeedsWakeup(r Ring) bool {
	switch r {
	case Fill:
		return s.fill.needsWakeup()
	case TX:
		return s.tx.needsWakeup()
	}
	return false
}

// TxReserve reserves up to n TX descriptors and returns how many (0 when
// the ring is full); set them with TxSet and publish them with TxSubmit
// before the next reserve.
func (s *Socket) TxReserve(n int) int {
	k := min(s.tx.free(uint32(n)), uint32(n))
	s.reserved = k
	return int(k)
}

// TxSet makes the i-th reserved descriptor send length bytes of the frame
// at addr.
func (s *Socket) TxSet(i int, addr uint64, length int) {
	d := s.tx.desc(s.tx.cachedProducer + uint32(i))
	d.Addr, d.Len, d.Options = addr, uint32(length), 0
}

// TxSubmit publishes the first n reserved descriptors to the kernel (n ≤
// what TxReserve returned). The kernel sends them on the next Kick, or
// by itself in zero-copy mode when it did not ask for a wakeup.
func (s *Socket) TxSubmit(n int) {
	s.tx.publish(uint32(min(uint32(n), s.reserved)))
	s.reserved = 0
}

// Complete moves up to len(addrs) addresses of sent frames from the
// completion ring into addrs and returns how many; those frames are the
// caller's again.
func (s *Socket) Complete(addrs []uint64) int {
	n := min(s.comp.ready(), uint32(len(addrs)))
	for i := range n {
		addrs[i] = *s.comp.addr(s.comp.cachedConsumer + i)
	}
	if n > 0 {
		s.comp.release(n)
	}
	return int(n)
}

// Fill gives the kernel up to len(addrs) frames to receive into and
// returns how many the fill ring took.
func (s *Socket) Fill(addrs []uint64) int {
	n := min(s.fill.free(uint32(len(addrs))), uint32(len(addrs)))
	for i := range n {
		*s.fill.addr(s.fill.cachedProducer + i) = addrs[i]
	}
	if n > 0 {
		s.fill.publish(n)
	}
	return int(n)
}

// Receive copies up to len(descs) received descriptors into descs and
// returns how many, leaving them on the RX ring until Release: the frames
// are read in place (Bytes) and then released and refilled.
func (s *Socket) Receive(descs []Desc) int {
	n := min(s.rx.ready(), uint32(len(descs)))
	for i := range n {
		descs[i] = *(*Desc)(unsafe.Pointer(s.rx.desc(s.rx.cachedConsumer + i)))
	}
	return int(n)
}

// Release frees the first n descriptors Receive returned.
func (s *Socket) Release(n int) {
	if n > 0 {
		s.rx.release(uint32(n))
	}
}

// Kick asks the kernel to send what the TX ring holds (sendto with
// MSG_DONTWAIT). In copy mode the kernel sends synchronously, up to its
// budget (SetTxBudget) and until the driver's queue is full; what it did
// not take stays on the ring for the next Kick (EAGAIN, ENOBUFS: not
// errors). dropped is the copy mode's EBUSY: the driver dropped the last
// frame the kernel took (NET_XMIT_DROP), whose descriptor still comes
// back on the completion ring.
func (s *Socket) Kick() (dropped bool, err error) {
	_, _, e := unix.Syscall6(unix.SYS_SENDTO, uintptr(s.fd), 0, 0, unix.MSG_DONTWAIT, 0, 0)
	switch e {
	case 0, unix.EAGAIN, unix.ENOBUFS, unix.EINTR:
		return false, nil
	case unix.EBUSY:
		return true, nil
	}
	return false, fmt.Errorf("AF_XDP: kick the TX of ifindex %d queue %d: %w", s.opts.Ifindex, s.opts.Queue, e)
}

// Wakeup asks the kernel to receive into the fill ring (recvfrom with
// MSG_DONTWAIT), for a fill ring that NeedsWakeup.
func (s *Socket) Wakeup() error {
	_, _, e := unix.Syscall6(unix.SYS_RECVFROM, uintptr(s.fd), 0, 0, unix.MSG_DONTWAIT, 0, 0)
	switch e {
	case 0, unix.EAGAIN, unix.EBUSY, unix.EINTR:
		return nil
	}
	return fmt.Errorf("AF_XDP: wake the RX of ifindex %d queue %d: %w", s.opts.Ifindex, s.opts.Queue, e)
}

// Poll waits up to timeout for received frames (POLLIN), which also
// wakes the kernel's RX as Wakeup does; ready is false on a timeout.
func (s *Socket) Poll(timeout time.Duration) (ready bool, err error) {
	fds := []unix.PollFd{{Fd: int32(s.fd), Events: unix.POLLIN}}
	n, err := unix.Poll(fds, int(timeout.Milliseconds()))
	if err != nil {
		if errors.Is(err, unix.EINTR) {
			return false, nil
		}
		return false, fmt.Errorf("AF_XDP: poll ifindex %d queue %d: %w", s.opts.Ifindex, s.opts.Queue, err)
	}
	return n > 0 && fds[0].Revents&unix.POLLIN != 0, nil
}

// SetTxBudget sets how many frames one Kick may send in copy mode
// (XDP_MAX_TX_SKB_BUDGET, 6.17+; the kernel's default is 32, and it takes
// 32 to the TX ring's size).
func (s *Socket) SetTxBudget(n int) error {
	v := uint32(n)
	if err := setsockopt(s.fd, unix.XDP_MAX_TX_SKB_BUDGET, unsafe.Pointer(&v), 4); err != nil {
		return fmt.Errorf("AF_XDP: set the TX budget to %d on ifindex %d queue %d: %w", n, s.opts.Ifindex, s.opts.Queue, err)
	}
	return nil
}

// Stats reads the kernel's counters of the socket.
func (s *Socket) Stats() (Stats, error) {
	var st unix.XDPStatistics
	if _, err := getsockopt(s.fd, unix.XDP_STATISTICS, unsafe.Pointer(&st), unsafe.Sizeof(st)); err != nil {
		return Stats{}, fmt.Errorf("AF_XDP: read the statistics of ifindex %d queue %d: %w", s.opts.Ifindex, s.opts.Queue, err)
	}
	return Stats{
		RxDropped: st.Rx_dropped, RxInvalid: st.Rx_invalid_descs, TxInvalid: st.Tx_invalid_descs,
		RxRingFull: st.Rx_ring_full, FillRingEmpty: st.Rx_fill_ring_empty_descs, TxRingEmpty: st.Tx_ring_empty_descs,
	}, nil
}

func (s *Socket) closeRings() error {
	var errs []error
	for _, r := range []*ring{s.fill, s.comp, s.rx, s.tx} {
		if err := r.unmap(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Close unmaps the rings, closes the socket and frees the UMEM.
func (s *Socket) Close() error {
	if s.fd < 0 {
		return nil
	}
	errs := []error{s.closeRings(), unix.Close(s.fd)}
	s.fd = -1
	if s.umem != nil {
		errs = append(errs, unix.Munmap(s.umem))
		s.umem = nil
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("AF_XDP: close the socket on ifindex %d queue %d: %w", s.opts.Ifindex, s.opts.Queue, err)
	}
	return nil
}
