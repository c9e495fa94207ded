//go:build linux

package receiver

import (
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/hashicorp/go-hclog"
	"golang.org/x/sys/unix"
)

// TPACKET_V3 ring geometry: 64 blocks of 256 KiB per socket (16 MiB),
// blocks handed to Go when full or after afpRetire.
const (
	afpBlockSize = 1 << 18
	afpBlocks    = 64
	afpFrameSize = 2048 // nominal, for tp_frame_nr; V3 packs frames by size
	afpRetire    = 10 * time.Millisecond
	afpSnap      = 128 // bytes of each frame copied to the ring: all headers
	// TPACKET_ALIGN(sizeof(struct tpacket3_hdr)): where the sockaddr_ll
	// sits after each frame's header.
	afpSllOff = 48
)

// afpMethod counts with one TPACKET_V3 socket per CPU, joined in a
// PACKET_FANOUT_CPU group, each read by its own goroutine pinned to that
// CPU into its own fork of one Table: per-ring counters, sequence windows
// shared by all rings (so duplicates across rings are exact). Stop merges
// the counters.
type afpMethod struct {
	o     Options
	log   hclog.Logger
	base  *Table // the windows' owner; the rings' tables are its forks
	rings []*ring
	efd   int // eventfd written to stop the readers
	wg    sync.WaitGroup
	once  sync.Once
}

type ring struct {
	fd  int
	cpu int
	mem []byte

	mu    sync.Mutex // guards tab, drops, freezes
	tab   *Table
	drops uint64 // PACKET_STATISTICS tp_drops, accumulated (reading resets them)
	frzs  uint64 // tp_freeze_q_cnt
}

// startAFPacket opens the rings on ifindex and starts the readers. It
// must run in the interface's network namespace.
func startAFPacket(o Options, ifindex int) (_ *afpMethod, err error) {
	cpus, err := allowedCPUs()
	if err != nil {
		return nil, fmt.Errorf("afpacket: %w", err)
	}
	a := &afpMethod{o: o, log: o.Logger, efd: -1, base: newTable(o)}
	defer func() {
		if err != nil {
			a.close()
		}
	}()
	a.efd, err = unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		return nil, fmt.Errorf("afpacket: eventfd: %w", err)
	}
	// Every socket starts with a filter that drops everything, so that
	// none counts a packet on its own before it is in the fanout group
	// (which would count it twice); the filters open once all have joined.
	fanout := 0
	for i, cpu := range cpus {
		r, err := openRing(ifindex, cpu, a.base.Fork())
		if err != nil {
			return nil, err
		}
		a.rings = append(a.rings, r)
		arg := unix.PACKET_FANOUT_CPU << 16
		if i == 0 {
			arg |= unix.PACKET_FANOUT_FLAG_UNIQUEID << 16
		} else {
			arg |= fanout
		}
		if err := unix.SetsockoptInt(r.fd, unix.SOL_PACKET, unix.PACKET_FANOUT, arg); err != nil {
			return nil, fmt.Errorf("afpacket: join the fanout group on ifindex %d (cpu %d): %w", ifindex, cpu, err)
		}
		if i == 0 {
			v, err := unix.GetsockoptInt(r.fd, unix.SOL_PACKET, unix.PACKET_FANOUT)
			if err != nil {
				return nil, fmt.Errorf("afpacket: read the fanout group id: %w", err)
			}
			fanout = v & 0xffff
		}
	}
	for _, r := range a.rings {
		if err := setFilter(r.fd, afpSnap); err != nil {
			return nil, err
		}
	}
	for _, r := range a.rings {
		a.wg.Add(1)
		go func() {
			defer a.wg.Done()
			r.run(a.efd, a.log)
		}()
	}
	a.log.Debug("afpacket rings open", "ifindex", ifindex, "cpus", cpus, "fanout_id", fanout)
	return a, nil
}

// allowedCPUs are the CPUs this process may run on, in order.
func allowedCPUs() ([]int, error) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return nil, fmt.Errorf("read the CPUs this process may use: %w", err)
	}
	var cpus []int
	for c := 0; c < len(set)*64 && len(cpus) < set.Count(); c++ {
		if set.IsSet(c) {
			cpus = append(cpus, c)
		}
	}
	return cpus, nil
}

// pinThread locks the calling goroutine to its thread, for good (the
// thread exits with the goroutine), and that thread to cpu; what is
// logged says who could not be pinned.
func pinThread(cpu int, who string, log hclog.Logger) {
	runtime.LockOSThread()
	var set unix.CPUSet
	set.Set(cpu)
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		log.Warn(who+": cannot pin reader to its CPU", "cpu", cpu, "error", err)
	}
}

// setFilter attaches the classic BPF program "ret #snap": snap 0 drops
// every packet, else the first snap bytes are kept.
func setFilter(fd int, snap uint32) error {
	prog := []unix.SockFilter{{Code: unix.BPF_RET | unix.BPF_K, K: snap}}
	if err := unix.SetsockoptSockFprog(fd, unix.SOL_SOCKET, unix.SO_ATTACH_FILTER, &unix.SockFprog{Len: 1, Filter: &prog[0]}); err != nil {
		return fmt.Errorf("afpacket: attach the socket filter (ret %d): %w", snap, err)
	}
	return nil
}

func htons(v uint16) uint16 { return binary.BigEndian.Uint16(binary.NativeEndian.AppendUint16(nil, v)) }

func openRing(ifindex, cpu int, tab *Table) (_ *ring, err error) {
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("afpacket: open a packet socket: %w", err)
	}
	r := &ring{fd: fd, cpu: cpu, tab: tab}
	defer func() {
		if err != nil {
			r.close()
		}
	}()
	if err := setFilter(fd, 0); err != nil {
		return nil, err
	}
	if err := unix.SetsockoptInt(fd, unix.SOL_PACKET, unix.PACKET_VERSION, unix.TPACKET_V3); err != nil {
		return nil, fmt.Errorf("afpacket: TPACKET_V3: %w", err)
	}
	// Our own sends on this interface are not received traffic (4.20+;
	// older kernels: PACKET_OUTGOING frames are skipped when read).
	_ = unix.SetsockoptInt(fd, unix.SOL_PACKET, unix.PACKET_IGNORE_OUTGOING, 1)
	req := unix.TpacketReq3{
		Block_size: afpBlockSize, Block_nr: afpBlocks,
		Frame_size: afpFrameSize, Frame_nr: afpBlockSize / afpFrameSize * afpBlocks,
		Retire_blk_tov: uint32(afpRetire / time.Millisecond),
	}
	if err := unix.SetsockoptTpacketReq3(fd, unix.SOL_PACKET, unix.PACKET_RX_RING, &req); err != nil {
		return nil, fmt.Errorf("afpacket: set up the receive ring (%d blocks of %d bytes): %w", afpBlocks, afpBlockSize, err)
	}
	r.mem, err = unix.Mmap(fd, 0, afpBlockSize*afpBlocks, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE)
	if err != nil {
		return nil, fmt.Errorf("afpacket: map the receive ring: %w", err)
	}
	if err := unix.Bind(fd, &unix.SockaddrLinklayer{Protocol: htons(unix.ETH_P_ALL), Ifindex: ifindex}); err != nil {
		return nil, fmt.Errorf("afpacket: bind to ifindex %d: %w", ifindex, err)
	}
	return r, nil
}

func (r *ring) close() {
	if r.mem != nil {
		unix.Munmap(r.mem)
		r.mem = nil
	}
	if r.fd >= 0 {
		unix.Close(r.fd)
		r.fd = -1
	}
}

// run reads blocks until efd is written, then drains for three retire
// timeouts (a partly filled block is handed over only on timeout), and
// reads the socket's statistics a last time. Its thread is pinned to the
// ring's CPU and ends with it.
func (r *ring) run(efd int, log hclog.Logger) {
	pinThread(r.cpu, "afpacket", log)
	fds := []unix.PollFd{{Fd: int32(r.fd), Events: unix.POLLIN}, {Fd: int32(efd), Events: unix.POLLIN}}
	var drainUntil time.Time
	blk := 0
	for {
		for r.readBlock(blk) {
			blk = (blk + 1) % afpBlocks
		}
		if !drainUntil.IsZero() && time.Now().After(drainUntil) {
			break
		}
		timeout := 200
		if !drainUntil.IsZero() {
			timeout = int(afpRetire / time.Millisecond)
		}
		if _, err := unix.Poll(fds, timeout); err != nil && !errors.Is(err, unix.EINTR) {
			log.Error("afpacket: poll", "cpu", r.cpu, "error", err)
			time.Sleep(time.Millisecond)
		}
		if len(fds) > 1 && fds[1].Revents&unix.POLLIN != 0 {
			fds = fds[:1]
			drainUntil = time.Now().Add(3 * afpRetire)
		}
	}
	r.readStats()
}

// readBlock counts block blk if the kernel has handed it over, and gives
// it back.
func (r *ring) readBlock(blk int) bool {
	b := r.mem[blk*afpBlockSize : (blk+1)*afpBlockSize]
	status := (*uint32)(unsafe.Pointer(&b[8])) // tpacket_block_desc.hdr.bh1.block_status
	if atomic.LoadUint32(status)&unix.TP_STATUS_USER == 0 {
		return false
	}
	n := binary.NativeEndian.Uint32(b[12:])
	off := binary.NativeEndian.Uint32(b[16:])
	r.mu.Lock()
	for i := uint32(0); i < n; i++ {
		if uint64(off)+afpSllOff+12 > afpBlockSize {
			break // offsets outside the block: never from a sane kernel
		}
		h := b[off:]
		next := binary.NativeEndian.Uint32(h[0:])
		snap := binary.NativeEndian.Uint32(h[12:])
		mac := uint32(binary.NativeEndian.Uint16(h[24:]))
		if h[afpSllOff+10] != unix.PACKET_OUTGOING && uint64(off)+uint64(mac)+uint64(snap) <= afpBlockSize {
			// tp_sec, tp_nsec: the kernel's receive time, for a stream's
			// first arrival.
			r.tab.frameNs = uint64(binary.NativeEndian.Uint32(h[4:]))*1e9 + uint64(binary.NativeEndian.Uint32(h[8:]))
			r.tab.Add(h[mac : mac+snap])
		}
		if next == 0 {
			break
		}
		off += next
	}
	r.mu.Unlock()
	atomic.StoreUint32(status, unix.TP_STATUS_KERNEL)
	return true
}

// readStats adds the socket's PACKET_STATISTICS (which reading resets).
func (r *ring) readStats() {
	st, err := unix.GetsockoptTpacketStatsV3(r.fd, unix.SOL_PACKET, unix.PACKET_STATISTICS)
	if err != nil {
		return
	}
	r.mu.Lock()
	r.drops += uint64(st.Drops)
	r.frzs += uint64(st.Freeze_q_cnt)
	r.mu.Unlock()
}

func (a *afpMethod) snapshot() (counts, error) {
	sum := a.base.Fork()
	var c counts
	for _, r := range a.rings {
		r.readStats()
		r.mu.Lock()
		sum.Merge(r.tab)
		c.ringDrops += r.drops
		r.mu.Unlock()
	}
	c.streams, c.other, c.overflow = sum.counts(false, a.o.MaxRanges)
	return c, nil
}

// stop stops the readers, waits for them to drain and merges their
// counters.
func (a *afpMethod) stop() (counts, error) {
	a.signal()
	a.wg.Wait()
	var c counts
	if len(a.rings) == 0 {
		return c, nil
	}
	final := a.base
	for _, r := range a.rings {
		final.Merge(r.tab)
	}
	for _, r := range a.rings {
		c.ringDrops += r.drops
		if r.frzs > 0 {
			a.log.Warn("afpacket: ring queue was frozen", "cpu", r.cpu, "times", r.frzs)
		}
	}
	c.streams, c.other, c.overflow = final.counts(true, a.o.MaxRanges)
	return c, nil
}

func (a *afpMethod) signal() {
	a.once.Do(func() {
		if a.efd >= 0 {
			unix.Write(a.efd, binary.NativeEndian.AppendUint64(nil, 1))
		}
	})
}

func (a *afpMethod) close() error {
	a.signal()
	a.wg.Wait()
	for _, r := range a.rings {
		r.close()
	}
	a.rings = nil
	if a.efd >= 0 {
		unix.Close(a.efd)
		a.efd = -1
	}
	return nil
}
