//go:build linux

package xdp

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/hashicorp/go-hclog"
	"golang.org/x/sys/unix"

	"github.com/linerate/linerate/internal/xdpfeat"
	"github.com/linerate/linerate/pktgen"
	"github.com/linerate/linerate/pktgen/internal/engine"
)

func (b *Backend) log() hclog.Logger {
	if b.Log == nil {
		return hclog.NewNullLogger()
	}
	return b.Log
}

// Probe reports why the backend cannot send from iface, or nil: kernel
// 5.18+, the permission to load and run XDP programs in live-frame mode,
// and the driver's ndo_xdp_xmit (6.3+: its xdp-features; before, a
// driver of ownProgramDrivers needs a native program attached, which a
// run attaches itself: needsOwn). Probe attaches nothing: it is called
// for every description of the host. Every failure wraps
// pktgen.ErrUnsupported; the message says what to change.
func (b *Backend) Probe(iface string) error {
	return engine.OnThread(b.ThreadInit, func() error {
		_, _, err := probe(iface, b.forceOwn)
		return err
	})
}

func unsupported(iface, format string, args ...any) error {
	return fmt.Errorf("xdp backend on %s: %s: %w", iface, fmt.Sprintf(format, args...), pktgen.ErrUnsupported)
}

// kernelAtLeast compares uname's release with major.minor.
func kernelAtLeast(major, minor int) (string, bool) {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return "", true // unknown: let the run tell
	}
	rel := unix.ByteSliceToString(u.Release[:])
	parts := strings.SplitN(rel, ".", 3)
	if len(parts) < 2 {
		return rel, true
	}
	maj, err1 := strconv.Atoi(parts[0])
	min, err2 := strconv.Atoi(parts[1][:countDigits(parts[1])])
	if err1 != nil || err2 != nil {
		return rel, true
	}
	return rel, maj > major || maj == major && min >= minor
}

func countDigits(s string) int {
	n := 0
	for n < len(s) && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	return n
}

// probe checks iface in the calling thread's namespace and returns it
// and what its own XDP program needs (needsOwn); force makes the driver
// need one (a test's).
func probe(iface string, force bool) (*net.Interface, ownPlan, error) {
	var plan ownPlan
	if rel, ok := kernelAtLeast(5, 18); !ok {
		return nil, plan, unsupported(iface, "kernel %s has no XDP live-frame mode (BPF_F_TEST_XDP_LIVE_FRAMES, Linux 5.18+)", rel)
	}
	ifi, err := net.InterfaceByName(iface)
	if err != nil {
		return nil, plan, fmt.Errorf("xdp backend: interface %q: %w: %w", iface, pktgen.ErrNoDevice, err)
	}
	if ifi.Flags&net.FlagUp == 0 {
		return nil, plan, fmt.Errorf("xdp backend: %s: %w (ip link set %s up)", iface, pktgen.ErrDeviceDown, iface)
	}
	driver, _, _ := driverInfo(iface)
	feat, ferr := xdpfeat.Read(ifi.Index)
	if ferr == nil && feat&xdpfeat.NdoXmit == 0 {
		if driver == "veth" {
			return nil, plan, unsupported(iface, "the veth cannot transmit XDP frames (no ndo-xmit in its xdp-features): its peer needs an XDP program attached (linerate recv attaches one) or GRO on (ethtool -K PEER gro on); without either the peer discards them")
		}
		if feat&xdpfeat.Basic == 0 {
			return nil, plan, unsupported(iface, "driver %q cannot transmit XDP frames (neither ndo-xmit nor native XDP in its xdp-features)", driver)
		}
	}
	// A driver that transmits only with a native program attached to the
	// interface itself: the kernel's xdp-features say so (6.3+), or before
	// them its name.
	st, name, err := readXDPState(ifi.Index)
	if err != nil {
		return nil, plan, fmt.Errorf("xdp backend on %s: %w", iface, err)
	}
	if plan, err = needsOwn(iface, driver, feat, ferr == nil, force, st, name); err != nil {
		return nil, plan, err
	}
	// Load and run a program that drops its one frame: proves the
	// permission and live-frame support without sending anything.
	prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{Name: "lr_probe", Type: ebpf.XDP, License: "GPL",
		Instructions: asm.Instructions{asm.Mov.Imm(asm.R0, xdpDrop), asm.Return()}})
	if err != nil {
		if errors.Is(err, unix.EPERM) {
			return nil, plan, unsupported(iface, "loading an XDP program needs CAP_BPF and CAP_NET_ADMIN (root): %v", err)
		}
		return nil, plan, unsupported(iface, "load a probe XDP program: %v", err)
	}
	defer prog.Close()
	frame := make([]byte, 64)
	md := &xdpMD{dataEnd: uint32(len(frame)), ingressIfindex: uint32(ifi.Index)}
	if err := progRun(prog.FD(), frame, md, 1, 1); err != nil {
		switch {
		case errors.Is(err, unix.EPERM):
			return nil, plan, unsupported(iface, "the kernel refuses BPF_PROG_RUN in live-frame mode to this process (%v): it needs CAP_BPF and CAP_NET_ADMIN, and a sandbox or security module can refuse it even to root; use another backend (afxdp, afpacket)", err)
		case errors.Is(err, unix.EINVAL), errors.Is(err, unix.EOPNOTSUPP):
			return nil, plan, unsupported(iface, "the kernel refuses BPF_PROG_RUN in live-frame mode on ifindex %d: %v", ifi.Index, err)
		}
		return nil, plan, unsupported(iface, "BPF_PROG_RUN in live-frame mode: %v", err)
	}
	return ifi, plan, nil
}

// run is one Run's shared state.
type run struct {
	cfg      *pktgen.Config
	ifi      *net.Interface
	frames   []*pktgen.Frame
	prog     *ebpf.Program
	state    *ebpf.Map
	mem      []byte
	batch    uint32
	repeat   uint32
	driver   string
	trim     int // bytes past the frame each run cuts off (trimFor)
	possible int // the kernel's possible CPUs (nr_cpu_ids), 0 unknown: xmitQueue's
	before   map[string]uint64
	statsErr error
	force    bool        // the driver needs its own program (a test's: Backend.forceOwn)
	plan     ownPlan     // the interface's own XDP program (needsOwn)
	own      *ownProgram // the program the run attached, until detached
	log      hclog.Logger
}

func (r *run) close() {
	if err := r.own.detach(); err != nil {
		r.logger().Error("the send's own XDP program", "error", err)
	}
	if r.mem != nil {
		_ = unix.Munmap(r.mem)
	}
	if r.prog != nil {
		r.prog.Close()
	}
	if r.state != nil {
		r.state.Close()
	}
}

func (r *run) logger() hclog.Logger {
	if r.log == nil {
		return hclog.NewNullLogger()
	}
	return r.log
}

func (r *run) word(cpu, off int) *atomic.Uint64 {
	return (*atomic.Uint64)(unsafe.Pointer(&r.mem[cpu*slotLen+off]))
}

// Run sends cfg's frames in live-frame mode. See the package doc.
func (b *Backend) Run(ctx context.Context, cfg pktgen.Config, progress func(pktgen.Progress)) (*pktgen.Summary, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := cfg.UserspaceCheck(b.Name()); err != nil {
		return nil, err
	}
	log := b.log().Named("xdp").With("dev", cfg.Device)
	r := &run{cfg: &cfg, batch: b.BatchSize, repeat: b.Repeat, force: b.forceOwn, log: log}
	if r.batch == 0 {
		r.batch = DefaultBatchSize
	}
	if r.batch > 256 {
		return nil, fmt.Errorf("xdp backend: batch size %d: the kernel takes 1-256: %w", r.batch, pktgen.ErrConfig)
	}
	if r.repeat == 0 {
		r.repeat = DefaultRepeat
	}
	defer r.close()
	if err := engine.OnThread(b.ThreadInit, r.prepare); err != nil {
		return nil, err
	}
	log.Debug("prepared", "driver", r.driver, "ifindex", r.ifi.Index, "batch", r.batch, "repeat", r.repeat)
	sum, err := engine.Run(ctx, engine.Options{
		Backend: b.Name(), Config: &cfg, Open: r.open, Log: log, Progress: progress,
		Interval: b.Interval, ThreadInit: b.ThreadInit,
	})
	if err != nil {
		return nil, err
	}
	var after map[string]uint64
	err = engine.OnThread(b.ThreadInit, func() error {
		var err error
		_, after, err = driverInfo(cfg.Device)
		return err
	})
	// The send is over: its own program comes off the interface now, so
	// that the summary tells the truth of it (close is every other path's).
	if derr := r.own.detach(); derr != nil {
		sum.Warnings = append(sum.Warnings, derr.Error())
	}
	if n := r.plan.note(cfg.Device); n != "" {
		sum.Notes = append(sum.Notes, n)
	}
	if r.trim > 0 {
		sum.Notes = append(sum.Notes, fmt.Sprintf("each run cut %d bytes off a template that much longer, so that the kernel rebuilt the frame descriptor driver %s moves over its header when it transmits (else a page's next frame goes out with 12 zero bytes more in front)", r.trim, r.driver))
	}
	if err == nil && r.statsErr == nil {
		err = r.account(sum, after, log)
	} else {
		sum.Warnings = append(sum.Warnings, fmt.Sprintf("driver statistics of %s unreadable: frames the driver could not transmit are not visible", cfg.Device))
	}
	return sum, err
}

// prepare probes the interface, builds the frames and loads the program,
// in the sending namespace.
func (r *run) prepare() error {
	cfg := r.cfg
	ifi, plan, err := probe(cfg.Device, r.force)
	if err != nil {
		return err
	}
	r.ifi, r.plan = ifi, plan
	if plan.attach {
		if r.own, err = attachOwn(cfg.Device, ifi.Index); err != nil {
			return err
		}
		// With xdp-features the kernel says whether that was enough.
		if feat, ferr := xdpfeat.Read(ifi.Index); ferr == nil && feat&xdpfeat.NdoXmit == 0 {
			return unsupported(cfg.Device, "still no ndo-xmit in its xdp-features with a native XDP program (%s) attached to %s: the driver cannot transmit XDP frames", ownProgName, cfg.Device)
		}
		r.logger().Info("attached its own XDP program for the send", "program", ownProgName, "why", plan.why)
	}
	r.driver, r.before, r.statsErr = driverInfo(cfg.Device)
	r.trim = trimFor(r.driver)
	r.possible, _ = ebpf.PossibleCPU()
	for i := range cfg.CPUs {
		f, err := pktgen.BuildFrame(cfg, i, ifi.HardwareAddr)
		if err != nil {
			return fmt.Errorf("xdp backend: thread %d frame: %w", i, err)
		}
		if len(f.Bytes)+r.trim > MaxFrame {
			return fmt.Errorf("xdp backend: pkt_size %d: live-frame mode takes frames of at most %d bytes (on %s, driver %s: %d): %w", len(f.Bytes), MaxFrame, cfg.Device, r.driver, MaxFrame-r.trim, pktgen.ErrUnsupported)
		}
		r.frames = append(r.frames, f)
	}
	cpus := slices.Max(cfg.CPUs) + 1
	params := paramsOf(r.frames[0], cpus, r.batch)
	params.trim = int32(r.trim)
	r.prog, r.state, err = newGenerator(params)
	if err != nil {
		return fmt.Errorf("xdp backend: %w", err)
	}
	size := (cpus*slotLen + os.Getpagesize() - 1) &^ (os.Getpagesize() - 1)
	r.mem, err = unix.Mmap(r.state.FD(), 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return fmt.Errorf("xdp backend: map the generator state: %w", err)
	}
	return nil
}

// thread is one sender: its template, its CPU's slot.
type thread struct {
	r      *run
	cpu    int
	data   []byte
	md     xdpMD
	tid    int
	repeat uint32
	// dropping is the repeat of a call whose runs mostly drop (paced:
	// frames not due yet; or held at the start instant): 16 times the
	// backend's, up to MaxRepeat, so that the ~20 ms each call costs to
	// set up stays rare.
	dropping uint32
	paced    bool
	gate     time.Time // the start instant (zero: none)
	seq      *atomic.Uint64
	limit    *atomic.Uint64
}

func (r *run) open(i, cpu int) (engine.Thread, error) {
	f := r.frames[i]
	t := &thread{r: r, cpu: cpu, data: append(slices.Clone(f.Bytes), make([]byte, r.trim)...), tid: unix.Gettid(), repeat: r.repeat,
		dropping: uint32(min(uint64(r.repeat)*16, MaxRepeat)),
		seq:      r.word(cpu, stSeq), limit: r.word(cpu, stLimit)}
	t.md = xdpMD{dataEnd: uint32(len(t.data)), ingressIfindex: uint32(r.ifi.Index)}
	tsOff, err := pktgen.MonoOffset()
	if err != nil {
		return nil, err
	}
	limit := r.cfg.CountOf(i)
	if limit == 0 {
		limit = math.MaxUint64
	}
	var gap uint64
	if num, den := r.cfg.Period(i); num > 0 {
		gap = max((num+den/2)/den, 1)
		t.paced = true
		// Most runs of a paced program drop (not due yet) and are cheap:
		// longer calls keep the per-call pause rare.
		t.repeat = t.dropping
	}
	var csum uint64
	if f.UDPCsum {
		csum = uint64(csumBase(f))
	}
	r.word(cpu, stSeq).Store(0)
	r.word(cpu, stTSOff).Store(uint64(tsOff))
	r.word(cpu, stGap).Store(gap)
	r.word(cpu, stNext).Store(0)
	r.word(cpu, stSlack).Store(uint64(engine.CatchUp))
	r.word(cpu, stCsumBase).Store(csum)
	r.word(cpu, stFirst).Store(0)
	r.word(cpu, stLast).Store(0)
	r.word(cpu, stLimit).Store(limit)
	var gate uint64
	if at := r.cfg.StartAt; !at.IsZero() {
		gate = uint64(max(at.UnixNano()-tsOff, 0))
		t.gate = at
	}
	r.word(cpu, stStart).Store(gate)
	return t, nil
}

// earlyBy is how long before the start instant a thread makes its first
// BPF_PROG_RUN call: a live-frame call's setup (the XDP dispatcher's
// update waits for an RCU grace period) takes ~10 ms, more on a busy
// host, and must be over by the instant. Until then the program drops
// every frame (stStart), so the first one goes at the instant.
const earlyBy = 50 * time.Millisecond

// Early is how long before the instant Send is called (engine.Early).
func (t *thread) Early() time.Duration {
	if t.gate.IsZero() {
		return 0
	}
	return earlyBy
}

// Send runs the program until the target is reached or the run stops.
func (t *thread) Send(c *engine.Control) error {
	for !c.Stopped() {
		sent := t.seq.Load()
		if c.Target > 0 && sent >= c.Target {
			return nil
		}
		rep := t.repeat
		switch {
		case time.Now().Before(t.gate):
			// Held at the gate: enough runs to cover the wait and the
			// send (the limit still stops at the count).
			rep = t.dropping
		case !t.paced && c.Target > 0:
			rep = uint32(min(uint64(rep), c.Target-sent))
		}
		err := progRun(t.r.prog.FD(), t.data, &t.md, rep, t.r.batch)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return fmt.Errorf("BPF_PROG_RUN (live frames, repeat %d, batch %d) on %s: %w", rep, t.r.batch, t.r.cfg.Device, err)
		}
	}
	return nil
}

func (t *thread) Progress() (uint64, uint64) { return t.seq.Load(), 0 }

// Span is the program's first and last clock readings (the times the
// frames carry): paced, the first and the last frame's; unpaced, the
// first bulk's and the last bulk's (up to xmitBulk-1 frames later than
// the last reading, under a µs at line rate). A call's setup and
// teardown (~10 ms each) are not part of the sending window.
func (t *thread) Span() (first, last time.Time, ok bool) {
	f, l := t.r.word(t.cpu, stFirst).Load(), t.r.word(t.cpu, stLast).Load()
	if f == 0 || l < f {
		return time.Time{}, time.Time{}, false
	}
	// The offset the frames were stamped (and gated) with.
	off := int64(t.r.word(t.cpu, stTSOff).Load())
	return time.Unix(0, int64(f)+off), time.Unix(0, int64(l)+off), true
}

// Interrupt stops transmitting at once (limit 0: the program drops
// every further frame) and ends the syscall with a signal (SIGURG, which
// the Go runtime tolerates unasked).
func (t *thread) Interrupt() {
	t.limit.Store(0)
	_ = unix.Tgkill(os.Getpid(), t.tid, unix.SIGURG)
}

func (t *thread) Close() error { return nil }

// account moves frames the driver did not transmit from packets to
// errors, per thread when the driver's counters tell which thread's they
// were (xmitQueue).
func (r *run) account(sum *pktgen.Summary, after map[string]uint64, log hclog.Logger) error {
	total, queues, found := transmitted(r.before, after)
	if !found {
		sum.Warnings = append(sum.Warnings, fmt.Sprintf("driver %s of %s has no XDP transmit counter: frames it could not transmit are not visible here", r.driver, r.cfg.Device))
		return nil
	}
	if sum.Packets > 0 && total == 0 {
		return noneTransmitted(r.cfg.Device, r.driver, sum.Packets)
	}
	if total >= sum.Packets {
		return nil
	}
	lost := sum.Packets - total
	perThread := make([]uint64, len(sum.Threads))
	exact := len(sum.Threads) == 1
	if exact {
		perThread[0] = lost
	} else if r.possible > 0 && len(queues) > 0 {
		seen := map[int]bool{}
		exact = true
		for i, th := range sum.Threads {
			q, ok := xmitQueue(r.driver, th.CPU, len(queues), r.possible)
			if !ok || seen[q] {
				exact = false
				break
			}
			seen[q] = true
			if x := queues[q]; x < th.Packets {
				perThread[i] = th.Packets - x
			}
		}
	}
	if !exact {
		sum.Warnings = append(sum.Warnings, fmt.Sprintf("%d frames were not transmitted by %s's driver and cannot be told apart per thread: their sequence numbers are gaps at the receiver", lost, r.cfg.Device))
		log.Warn("frames not transmitted by the driver", "frames", lost)
		return nil
	}
	for i := range sum.Threads {
		th := &sum.Threads[i]
		d := min(perThread[i], th.Packets)
		th.Packets -= d
		th.Errors += d
		th.PPS = pktgen.Rate(th.Packets, th.USec)
	}
	sum.Warnings = append(sum.Warnings, fmt.Sprintf("%d frames were stamped but not transmitted by %s's driver (ring full): counted as errors; their sequence numbers are gaps at the receiver", lost, r.cfg.Device))
	log.Warn("frames not transmitted by the driver", "frames", lost)
	sum.Finish(r.cfg.FrameBytes())
	return nil
}
