//go:build linux && traffic

package receiver

import (
	"errors"
	"os"
	"runtime"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/link"
	"golang.org/x/sys/unix"

	"github.com/linerate/linerate/internal/bpftest"
	"github.com/linerate/linerate/internal/netns"
	"github.com/linerate/linerate/internal/netns/nstest"
)

// liveSender is a test-only line-rate generator: the kernel's XDP
// live-frame mode (BPF_PROG_RUN with BPF_F_TEST_XDP_LIVE_FRAMES, 5.18+)
// runs a program that writes the next sequence number into the template
// frame and returns XDP_TX, which transmits it out of the ingress
// interface — here the sending veth, so it lands on the peer's XDP.
type liveSender struct {
	prog *ebpf.Program
	seq  *ebpf.Map // array[1] u64: the last sequence sent
}

// newLiveSender: with shared, the sequence counter is taken with an
// atomic fetch-add, for senders on several CPUs numbering one stream. It
// skips t only when the kernel has no live-frame mode (the probe says
// so by name); any other failure, a verifier rejection included, fails t.
func newLiveSender(t *testing.T, shared bool) *liveSender {
	t.Helper()
	bpftest.SkipIfNotSupported(t, bpftest.HaveXDPLiveFrames())
	seq, err := ebpf.NewMap(&ebpf.MapSpec{Name: "lr_test_seq", Type: ebpf.Array, KeySize: 4, ValueSize: 8, MaxEntries: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { seq.Close() })
	insns := append(frameProlog(seq.FD()),
		asm.LoadMem(asm.R1, asm.R0, 0, asm.DWord),
		asm.Add.Imm(asm.R1, 1),
		asm.StoreMem(asm.R0, 0, asm.R1, asm.DWord),
		asm.HostTo(asm.BE, asm.R1, asm.Word),
		asm.StoreMem(asm.R2, seqOff, asm.R1, asm.Word),
		asm.Mov.Imm(asm.R0, 3), // XDP_TX
		asm.Return(),
		asm.Mov.Imm(asm.R0, xdpDrop).WithSymbol("drop"),
		asm.Return(),
	)
	if shared {
		i := slices.IndexFunc(insns, func(in asm.Instruction) bool { return in.OpCode == asm.LoadMemOp(asm.DWord) })
		insns = slices.Replace(insns, i, i+3,
			asm.Mov.Imm(asm.R1, 1),
			atomicFetch(asm.FetchAdd, asm.R0, asm.R1, 0),
			asm.Add.Imm(asm.R1, 1))
	}
	prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{Name: "lr_test_send", Type: ebpf.XDP, License: "Dual MIT/GPL", Instructions: insns})
	bpftest.SkipIfNotSupported(t, err)
	t.Cleanup(func() { prog.Close() })
	return &liveSender{prog: prog, seq: seq}
}

// xdpMD is struct xdp_md as BPF_PROG_RUN takes it for its context.
type xdpMD struct {
	Data, DataEnd, DataMeta, IngressIfindex, RxQueueIndex, EgressIfindex uint32
}

// send transmits n copies of frame out of l (in l's namespace) from each
// of the CPUs given, one thread pinned to each, all numbering one stream,
// and returns how many sequences were sent and how long it took.
func (s *liveSender) send(t *testing.T, l *netns.Link, frame []byte, n uint32, cpus ...int) (uint64, time.Duration) {
	t.Helper()
	if len(cpus) == 0 {
		cpus = []int{0}
	}
	start := time.Now()
	errs := make(chan error, len(cpus))
	for _, cpu := range cpus {
		go func() {
			errs <- l.NS.Do(func() error {
				var old, one unix.CPUSet
				if err := unix.SchedGetaffinity(0, &old); err != nil {
					return err
				}
				one.Set(cpu)
				if err := unix.SchedSetaffinity(0, &one); err != nil {
					return err
				}
				defer unix.SchedSetaffinity(0, &old)
				_, err := s.prog.Run(&ebpf.RunOptions{
					Data: frame, Repeat: n, Flags: unix.BPF_F_TEST_XDP_LIVE_FRAMES, BatchSize: 64,
					Context: xdpMD{DataEnd: uint32(len(frame)), IngressIfindex: uint32(l.Index)},
				})
				return err
			})
		}()
	}
	var err error
	for range cpus {
		err = errors.Join(err, <-errs)
	}
	took := time.Since(start)
	bpftest.SkipIfNotSupported(t, err)
	var sent uint64
	if err := s.seq.Lookup(uint32(0), &sent); err != nil {
		t.Fatal(err)
	}
	return sent, took
}

// TestXDPLineRate sends one stream with the kernel's XDP live-frame mode
// over a veth to the XDP receiver and checks that it counted every frame
// the receiving veth delivered to XDP, with no duplicates and gaps only
// where the driver says frames never reached it. LINERATE_RATE_PACKETS
// sets the count (default 2 M); the rate is logged.
func TestXDPLineRate(t *testing.T) {
	n := uint32(2_000_000)
	if v := os.Getenv("LINERATE_RATE_PACKETS"); v != "" {
		x, err := strconv.ParseUint(v, 10, 32)
		if err != nil {
			t.Fatalf("LINERATE_RATE_PACKETS=%q: %v", v, err)
		}
		n = uint32(x)
	}
	if testing.Short() {
		n = 100_000
	}
	p := nstest.NewPair(t, 1)
	s := newLiveSender(t, false)
	r := startIn(t, t.Context(), p.B, Options{Method: MethodXDP})
	sent, took := s.send(t, p.A, withMACs(testFrame{seq: 0}.bytes(), p.B.MAC, p.A.MAC), n)
	rep, err := r.Stop()
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Streams) != 1 {
		t.Fatalf("streams %+v", rep.Streams)
	}
	st := rep.Streams[0]
	rate := float64(sent) / took.Seconds()
	t.Logf("sent %d in %v: %.2f Mpps; received %d (%.3f%%), missing %d, duplicates %d, reordered %d; link %+v",
		sent, took, rate/1e6, st.Received, 100*float64(st.Received)/float64(sent), st.Missing, st.Duplicates, st.Reordered, rep.Link)
	if st.Duplicates != 0 || st.Reordered != 0 || st.BeyondCapacity != 0 {
		t.Errorf("stream %+v", st)
	}
	// Every frame the driver ran through XDP was counted, exactly.
	if rep.Link.XDPPackets != rep.Packets || st.Received != rep.TestPackets() {
		t.Errorf("receiver counted %d frames, the veth's xdp_packets says %d", rep.Packets, rep.Link.XDPPackets)
	}
	// What did not arrive is missing, and nothing else.
	if st.MaxSeq-st.Missing != st.Received || st.Received > sent {
		t.Errorf("max_seq %d - missing %d != received %d (sent %d)", st.MaxSeq, st.Missing, st.Received, sent)
	}
}

// TestXDPOneStreamTwoCPUs: one stream sent from two CPUs into a two-queue
// veth, so that the XDP program counts it on both CPUs at once: the
// shared sequence state keeps duplicates and missing exact, and max_seq
// is the highest of the CPUs'. The two CPUs number the packets from one
// counter, so they update the same window words at the same time: the
// worst case for the compare-and-swap, which must still record every
// packet (no unrecorded, none late).
func TestXDPOneStreamTwoCPUs(t *testing.T) {
	if runtime.NumCPU() < 2 {
		t.Skip("needs 2 CPUs")
	}
	const n = 500_000 // per CPU
	p := nstest.NewPair(t, 2)
	s := newLiveSender(t, true)
	r := startIn(t, t.Context(), p.B, Options{Method: MethodXDP})
	sent, took := s.send(t, p.A, withMACs(testFrame{seq: 0}.bytes(), p.B.MAC, p.A.MAC), n, 0, 1)
	rep, err := r.Stop()
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Streams) != 1 {
		t.Fatalf("streams %+v", rep.Streams)
	}
	st := rep.Streams[0]
	t.Logf("sent %d from 2 CPUs in %v (%.2f Mpps); %+v; link %+v", sent, took, float64(sent)/took.Seconds()/1e6, st, rep.Link)
	if st.Received != rep.Link.XDPPackets || st.Duplicates != 0 || st.MaxSeq-st.Missing != st.Received || st.Unrecorded != 0 || st.Late != 0 {
		t.Errorf("stream %+v, link %+v", st, rep.Link)
	}
	if st.Received == sent && (st.MaxSeq != sent || st.Missing != 0) {
		t.Errorf("all %d arrived, but max_seq %d missing %d", sent, st.MaxSeq, st.Missing)
	}
	// The spread: a veth hands an XDP frame to the receive queue of the
	// sending CPU (modulo its queues), so each CPU's n frames are on its
	// own queue.
	want := []QueuePackets{{Queue: 0, Packets: n}, {Queue: 1, Packets: n}}
	if st.Received == 2*n && !slices.Equal(st.Queues, want) {
		t.Errorf("queues %+v, want %+v", st.Queues, want)
	}
	var onQueues uint64
	for _, q := range st.Queues {
		onQueues += q.Packets
	}
	if onQueues != st.Received || len(st.Queues) != 2 {
		t.Errorf("queues %+v: want the %d packets on queues 0 and 1", st.Queues, st.Received)
	}
}

// TestAFPacketRate floods the AF_PACKET method with the live-frame
// sender (a pass-through XDP program on the receiving veth lets the
// frames in) and checks that every frame the kernel handed to the packet
// sockets is either counted or in ring_drops. LINERATE_RATE_PACKETS sets
// the count (default 1 M); the rates are logged.
func TestAFPacketRate(t *testing.T) {
	n := uint32(1_000_000)
	if v := os.Getenv("LINERATE_RATE_PACKETS"); v != "" {
		x, err := strconv.ParseUint(v, 10, 32)
		if err != nil {
			t.Fatalf("LINERATE_RATE_PACKETS=%q: %v", v, err)
		}
		n = uint32(x)
	}
	if testing.Short() {
		n = 100_000
	}
	p := nstest.NewPair(t, 1)
	pass, err := ebpf.NewProgram(&ebpf.ProgramSpec{Name: "lr_test_pass", Type: ebpf.XDP, License: "Dual MIT/GPL",
		Instructions: asm.Instructions{asm.Mov.Imm(asm.R0, xdpPass), asm.Return()}})
	if err != nil {
		t.Fatal(err)
	}
	defer pass.Close()
	if err := p.B.NS.Do(func() error {
		l, err := link.AttachXDP(link.XDPOptions{Program: pass, Interface: p.B.Index, Flags: link.XDPDriverMode})
		if err == nil {
			t.Cleanup(func() { l.Close() })
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	s := newLiveSender(t, false)
	r := startIn(t, t.Context(), p.B, Options{Method: MethodAFPacket})
	start := time.Now()
	sent, took := s.send(t, p.A, withMACs(testFrame{seq: 0}.bytes(), p.B.MAC, p.A.MAC), n)
	rep, err := r.Stop()
	if err != nil {
		t.Fatal(err)
	}
	elapsed := time.Since(start)
	var st StreamReport
	if len(rep.Streams) == 1 {
		st = rep.Streams[0]
	}
	t.Logf("sent %d in %v (%.2f Mpps); counted %d (%.1f%%) + ring drops %d; %.2f Mpps counted over %v; link %+v",
		sent, took, float64(sent)/took.Seconds()/1e6, st.Received, 100*float64(st.Received)/float64(sent), rep.RingDrops,
		float64(st.Received)/elapsed.Seconds()/1e6, elapsed, rep.Link)
	if st.Received+rep.RingDrops != rep.Link.XDPPackets || st.Duplicates != 0 {
		t.Errorf("counted %d + ring drops %d != %d frames passed to the stack; stream %+v", st.Received, rep.RingDrops, rep.Link.XDPPackets, st)
	}
}
