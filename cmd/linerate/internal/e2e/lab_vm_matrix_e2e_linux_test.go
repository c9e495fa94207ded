//go:build linux && traffic

package e2e

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/linerate/linerate/cmd/linerate/internal/lab"
	"github.com/linerate/linerate/coordinator"
	"github.com/linerate/linerate/coordinator/report"
	"github.com/linerate/linerate/pktgen"
	"github.com/linerate/linerate/receiver"
)

// vmXDPAttached is what the xdp backend says of its sends from a guest
// (Debian 6.1's virtio_net, no xdp-features): it attached its own
// program for the send.
const vmXDPAttached = "attached its own XDP program lr_xmit_pass (XDP_PASS, native mode) to data0 for the send and detached it after: driver virtio_net transmits XDP frames only while"

// vmWakeup is what both AF_XDP ends say of need_wakeup on the guests'
// virtio_net by default: off, a virtual device (under TCG its transmit is
// the hypervisor's, inside the kick).
var vmWakeup = []string{"need_wakeup off (auto): ", "driver virtio_net is a virtual device"}

// vmMatrixPairs are the sender backend × receiver method pairs the
// matrix shows on VM hosts: every one but kernel × xdp (the 1x1 subtest)
// and xdp × xdp (the xdp subtest).
func vmMatrixPairs() [][2]string {
	var pairs [][2]string
	for _, b := range []pktgen.BackendName{pktgen.BackendKernel, pktgen.BackendXDP, pktgen.BackendAFXDP, pktgen.BackendAFPacket} {
		for _, m := range []receiver.Method{receiver.MethodXDP, receiver.MethodAFXDP, receiver.MethodAFPacket} {
			if m == receiver.MethodXDP && (b == pktgen.BackendKernel || b == pktgen.BackendXDP) {
				continue
			}
			pairs = append(pairs, [2]string{string(b), string(m)})
		}
	}
	return pairs
}

// checkVMMatrix runs every pair of vmMatrixPairs from s1 into r1 for a
// second at vmRate, each checked by checkVMPair.
func checkVMMatrix(t *testing.T, run vmRun, name string) {
	for _, pair := range vmMatrixPairs() {
		t.Run(pair[0]+"×"+pair[1], func(t *testing.T) {
			checkVMPair(t, run, name, pair[0], receiver.Method(pair[1]), "1s")
		})
	}
}

// checkVMPair runs backend from s1 into method on r1 for duration at
// vmRate and checks it: exact per flow and per stream, as the switch
// counted (s1's port counted every frame sent, no port dropped one, r1's
// sent them all on); the backend and method as asked; the sender's
// threads on node 1's CPUs; what each engine says of itself on
// virtio_net (Debian 6.1): the xdp backend attached its own program for
// the send, the AF_XDP ends (either way) are in copy mode with
// need_wakeup off (a virtual device), the afxdp receiver has one reader
// per queue, each on a node 1 CPU; and, for the methods that know the
// queue (xdp, afxdp), every stream's packets on the receive queues it
// names (the RSS spread), none where afpacket cannot tell.
func checkVMPair(t *testing.T, run vmRun, name, backend string, method receiver.Method, duration string) {
	t.Helper()
	before := labSwitchPorts(t, name, "s1", "r1")
	res, _ := run(t, "--senders", "s1", "--receivers", "r1", "--duration", duration, "--rate", vmRate, "--backend", backend, "--method", string(method))
	after := labSwitchPorts(t, name, "s1", "r1")
	if len(res.Flows) != 1 {
		t.Fatalf("%d flows, want 1", len(res.Flows))
	}
	f := res.Flows[0]
	var streams uint64
	for _, st := range f.StreamDetail {
		streams += st.Sent
		if st.Sent == 0 || st.Received != st.Sent || st.Lost != 0 || st.Duplicates != 0 || st.Missing != 0 {
			t.Errorf("stream %s→%s:%d: sent %d received %d lost %d duplicates %d missing %d: want all received, once",
				st.Src, st.Dst, st.DstPort, st.Sent, st.Received, st.Lost, st.Duplicates, st.Missing)
		}
		var on uint64
		for _, q := range st.Queues {
			on += q.Packets
		}
		if method.KnowsQueues() && (len(st.Queues) == 0 || on != st.Received) || !method.KnowsQueues() && st.Queues != nil {
			t.Errorf("stream %s→%s:%d: received %d, on queues %+v: want them all on the queues named (xdp, afxdp) or none named (afpacket)",
				st.Src, st.Dst, st.DstPort, st.Received, st.Queues)
		}
	}
	if f.Sent == 0 || streams != f.Sent || f.Received != f.Sent || f.Lost != 0 || f.Duplicates != 0 {
		t.Errorf("flow %s→%s: sent %d (streams %d) received %d lost %d duplicates %d refused %d", f.Sender, f.Receiver, f.Sent, streams, f.Received, f.Lost, f.Duplicates, f.Refused)
	}
	s1, r1 := checkVMSwitch(t, before, after, f.Sent)
	checkEngines(t, res, backend, string(method))
	for _, h := range res.Hosts {
		switch h.Role {
		case "sender":
			checkVMSender(t, h, backend, len(f.StreamDetail))
		case "receiver":
			checkVMReceiver(t, h, method)
		}
	}
	t.Logf("%s×%s: sent %d, received %d over %d streams; switch: s1 in %d, r1 out %d; rss spread: %s",
		backend, method, f.Sent, f.Received, len(f.StreamDetail), s1.TestPackets, r1.TxPackets, res.RSSSpread("r1"))
}

// checkVMSwitch fails t unless the switch, read before and after a run
// of one flow from s1 to r1 (labSwitchPorts), counted it as sent: s1's
// port program saw the sent test frames come in, no port dropped any,
// and r1's port sent them on with at most a few frames of the hosts' own.
// It returns the two ports' counts over the run.
func checkVMSwitch(t *testing.T, before, after coordinator.PathTruth, sent uint64) (s1, r1 coordinator.PortTruth) {
	t.Helper()
	d := after.Sub(before)
	s1, r1 = labPortOf(t, d, "s1"), labPortOf(t, d, "r1")
	if s1.TestPackets != sent || d.Drops() != 0 {
		t.Errorf("switch: port s1 counted %d test frames in, the ports dropped %d (%+v): want the %d sent, none dropped", s1.TestPackets, d.Drops(), d.SwitchPorts, sent)
	}
	if r1.TxPackets < sent || r1.TxPackets > sent+16 {
		t.Errorf("switch port r1: sent %d frames toward r1, want the %d test frames and at most a few others", r1.TxPackets, sent)
	}
	return s1, r1
}

// checkVMSender checks what a VM sender of backend said of its send of
// streams streams: its threads on node 1's CPUs, one a stream, and for
// xdp and afxdp what they did on virtio_net.
func checkVMSender(t *testing.T, h coordinator.Host, backend string, streams int) {
	t.Helper()
	if len(h.CPUs) != streams || slices.ContainsFunc(h.CPUs, func(c int) bool { return !slices.Contains(vmNode1, c) }) {
		t.Errorf("%s: threads on CPUs %v for %d streams: want one a stream, on node 1's %v", h.Name, h.CPUs, streams, vmNode1)
	}
	notes := strings.Join(h.BackendNotes, "; ")
	var want []string
	switch pktgen.BackendName(backend) {
	case pktgen.BackendXDP:
		want = []string{vmXDPAttached}
	case pktgen.BackendAFXDP:
		want = append([]string{"AF_XDP copy mode"}, vmWakeup...)
	}
	for _, w := range want {
		if !strings.Contains(notes, w) {
			t.Errorf("%s: backend %s, notes %q: want %q", h.Name, h.Backend, notes, w)
		}
	}
}

// checkVMReceiver checks what a VM receiver said of its method: xdp in
// the driver (native); afxdp in copy mode (virtio_net on 6.1; its
// zero-copy came in 6.11), need_wakeup off, arrivals stamped in the
// redirect program, one reader per queue, each on the node 1 CPU its
// queue's IRQ was pinned to.
func checkVMReceiver(t *testing.T, h coordinator.Host, method receiver.Method) {
	t.Helper()
	switch method {
	case receiver.MethodXDP:
		if h.XDPMode != receiver.XDPNative {
			t.Errorf("%s: xdp mode %q (%s), want native", h.Name, h.XDPMode, h.MethodReason)
		}
	case receiver.MethodAFXDP:
		for _, w := range append([]string{"copy mode"}, vmWakeup...) {
			if !strings.Contains(h.MethodReason, w) {
				t.Errorf("%s: %s: want %q", h.Name, h.MethodReason, w)
			}
		}
		// Debian's 6.1 lets XDP programs call bpf_xdp_adjust_meta: the
		// redirect program stamps the arrivals (the receiver's probe).
		if !strings.Contains(h.MethodReason, "; arrivals stamped by the redirect program (XDP metadata)") {
			t.Errorf("%s: %s: want the arrivals stamped by the redirect program (6.1 allows bpf_xdp_adjust_meta)", h.Name, h.MethodReason)
		}
		readers := 0
		for _, f := range strings.Fields(h.MethodReason) {
			if _, cpu, ok := strings.Cut(strings.TrimSuffix(f, ";"), "→cpu"); ok {
				readers++
				if n, err := strconv.Atoi(cpu); err != nil || !slices.Contains(vmNode1, n) {
					t.Errorf("%s: reader %s: want it on one of node 1's CPUs %v", h.Name, f, vmNode1)
				}
			}
		}
		if readers != lab.DefaultVMQueues {
			t.Errorf("%s: %d readers in %q, want one per queue (%d)", h.Name, readers, h.MethodReason, lab.DefaultVMQueues)
		}
	}
}

// vmBurst is the burst of the cut-bursts run: each built frame sent 4
// times a transmit call (xmit_more).
const vmBurst = 4

// checkVMBurst: kernel pktgen in s1's guest, unpaced, --burst 4, for a
// second, in the default layout: unpaced, one pktgen device on each of
// node 1's 2 CPUs' threads, not one per TX queue (two a thread, of which
// the second sent nothing unpaced: pktgen.KernelPerQueue), every stream
// sending. It fills the guest's virtio TX rings, whose
// queue then stops, and pktgen ends the burst under way early: the next
// frame's sequence falls in the step of the one cut short, and r1's
// receiver, counting in steps of the copies, sees more than 4 copies
// there (duplicates). The
// switch is the known truth: s1's port counted every frame pktgen
// counted, and r1's sent on no more than it was given, so the path
// duplicated none: every duplicate is a burst cut short (cut bursts that
// left no duplicate behind, a step shifted since the last, are not
// seen). The books balance as a run with bursts keeps them: every copy
// that arrived is received (r1's port sent those on), sent = received +
// lost, and every lost frame a drop the switch counted; the text report
// says what the duplicates are.
func checkVMBurst(t *testing.T, run vmRun, name string) {
	before := labSwitchPorts(t, name, "s1", "r1")
	res, _ := run(t, "--senders", "s1", "--receivers", "r1", "--duration", "1s", "--backend", "kernel", "--method", "xdp", "--burst", strconv.Itoa(vmBurst))
	after := labSwitchPorts(t, name, "s1", "r1")
	if len(res.Flows) != 1 {
		t.Fatalf("%d flows, want 1", len(res.Flows))
	}
	f := res.Flows[0]
	if res.Burst != vmBurst || res.Copies != vmBurst {
		t.Errorf("result: burst %d, copies %d: want %d each", res.Burst, res.Copies, vmBurst)
	}
	d := after.Sub(before)
	s1, r1 := labPortOf(t, d, "s1"), labPortOf(t, d, "r1")
	if len(f.StreamDetail) != len(vmNode1) {
		t.Errorf("%d streams, want one a CPU of node 1 (%d): unpaced, one pktgen device a thread", len(f.StreamDetail), len(vmNode1))
	}
	var sent, received, lost, dups uint64
	for _, s := range f.StreamDetail {
		sent, received, lost, dups = sent+s.Sent, received+s.Received, lost+s.Lost, dups+s.Duplicates
		t.Logf("stream %s→%s:%d: sent %d received %d lost %d duplicates %d missing %d max_seq %d", s.Src, s.Dst, s.DstPort, s.Sent, s.Received, s.Lost, s.Duplicates, s.Missing, s.MaxSeq)
		if s.Sent == 0 || s.Received+s.Lost != s.Sent {
			t.Errorf("stream %s→%s:%d: sent %d received %d lost %d: want sent = received + lost", s.Src, s.Dst, s.DstPort, s.Sent, s.Received, s.Lost)
		}
	}
	if f.Sent == 0 || sent != f.Sent || received != f.Received || lost != f.Lost || dups != f.Duplicates || f.Received+f.Lost != f.Sent || f.LostNetwork != f.Lost {
		t.Errorf("flow %s→%s: sent %d received %d lost %d (network %d) duplicates %d refused %d; streams: sent %d received %d lost %d duplicates %d: want sent = received + lost, all lost in the network, the streams summing to the flow",
			f.Sender, f.Receiver, f.Sent, f.Received, f.Lost, f.LostNetwork, f.Duplicates, f.Refused, sent, received, lost, dups)
	}
	if s1.TestPackets != f.Sent || s1.Drops != 0 {
		t.Errorf("switch port s1: %d test frames in, %d dropped: want every one of the %d sent, none dropped there", s1.TestPackets, s1.Drops, f.Sent)
	}
	if r1.TxPackets < f.Received || r1.TxPackets > f.Received+16 {
		t.Errorf("switch port r1: sent %d frames toward r1, want the %d received and at most a few others", r1.TxPackets, f.Received)
	}
	lostAreDrops(t, "flow s1→r1", f.Lost, d.Drops())
	if f.Duplicates == 0 {
		t.Errorf("no duplicates at %.0f pps with --burst %d: no burst was seen cut short (sent %d, received %d)", f.AchievedPPS, vmBurst, f.Sent, f.Received)
	}
	var b strings.Builder
	if err := report.RunTable(&b, res); err != nil {
		t.Fatal(err)
	}
	note := fmt.Sprintf("duplicates with --burst %d: %d copies beyond a frame's %d: a burst pktgen ended early", vmBurst, f.Duplicates, vmBurst)
	if !strings.Contains(b.String(), note) {
		t.Errorf("the report does not say %q:\n%s", note, b.String())
	}
	t.Logf("--burst %d unpaced: %.0f pps, sent %d, received %d, lost %d = switch drops %d (%+v), duplicates (copies of cut bursts) %d",
		vmBurst, f.AchievedPPS, f.Sent, f.Received, f.Lost, d.Drops(), d.SwitchPorts, f.Duplicates)
}
