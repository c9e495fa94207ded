//go:build linux && traffic

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/netip"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/linerate/linerate/cmd/linerate/internal/lab"
	"github.com/linerate/linerate/coordinator"
	"github.com/linerate/linerate/pktgen"
	"github.com/linerate/linerate/receiver"
)

// The many-streams runs of TestLabMatrix's lab: manySenders senders of
// manyThreads threads each, fanned in on r1, are more streams than a
// receiver's default table holds (receiver.DefaultMaxStreams), so the run
// arms r1 with a table of its own size (the streams and a quarter, at
// least 16, to spare). The lab's veths have manyQueues queues each, one
// per sender thread (the afxdp backend binds a socket on a queue of its
// own per thread) and one afxdp reader each; the lab carries manyVLAN.
const (
	manySenders = 17
	manyThreads = 2
	manyQueues  = 2
	manyVLAN    = 100
	// manyCount and manyRate are each flow's packets and pace: every
	// stream sends half, 400 packets at 200 pps, all 34 at once. The
	// pace is what this 2-CPU machine carries with a reader in Go: a
	// paced userspace thread spins the last 100 µs before each packet
	// (pktgen/internal/engine Wait), 0.7 of a CPU for the 6,800 pps of
	// all 34; at 51,000 pps (1,500 per stream) the senders' spinning
	// took both CPUs and the afxdp method's reader of the busier queue
	// counted 21,094 of its 39,000 packets; the books put the rest on
	// the hosts, none on the network.
	manyCount = 800
	manyRate  = "400"
)

// manyStreamsLab are the `lab up` flags of a lab for checkManyStreams.
func manyStreamsLab() []string {
	return []string{"--senders", fmt.Sprint(manySenders), "--queues", fmt.Sprint(manyQueues), "--vlan", fmt.Sprint(manyVLAN)}
}

// checkManyStreams runs 34 streams (17 senders × 2 threads, fan-in) into
// r1 of lab name (up with manyStreamsLab; flags reach its agents) with
// the AF_XDP engines at both ends, and tagged over IPv6 from the
// AF_PACKET sender into the afxdp and into the xdp method. Each run
// counts every stream exactly (checkStreamsExact) and agrees with the
// switch, which the run's result does not carry (a `linerate run`
// against a lab that is up): every sender's port counted its flow's
// manyCount test packets coming in, tagged when the run tags, and
// dropped none, and r1's port sent them all on.
func checkManyStreams(t *testing.T, bin, name string, flags []string) {
	if manySenders*manyThreads <= receiver.DefaultMaxStreams {
		t.Fatalf("%d streams: want more than a receiver's default table of %d", manySenders*manyThreads, receiver.DefaultMaxStreams)
	}
	spec := lab.Spec{Senders: manySenders, Receivers: 1}
	senders := spec.SenderNames()
	ports := append(append([]string{}, senders...), "r1")
	for _, c := range []struct {
		backend pktgen.BackendName
		method  receiver.Method
		tagged6 bool // --ipv6 --vlan manyVLAN
	}{
		{pktgen.BackendAFXDP, receiver.MethodAFXDP, false},
		{pktgen.BackendAFPacket, receiver.MethodAFXDP, true},
		{pktgen.BackendAFPacket, receiver.MethodXDP, true},
	} {
		sub := string(c.backend) + "×" + string(c.method)
		family := []string{}
		if c.tagged6 {
			sub += "/ipv6-vlan"
			family = []string{"--ipv6", "--vlan", fmt.Sprint(manyVLAN)}
		}
		t.Run(sub, func(t *testing.T) {
			before := labSwitchPorts(t, name, ports...)
			res, _ := runAgainstLab(t, bin, flags, 2*time.Minute, append([]string{"--senders", strings.Join(senders, ","), "--receivers", "r1", "--pattern", string(coordinator.FanIn),
				"--threads", fmt.Sprint(manyThreads), "--backend", string(c.backend), "--method", string(c.method),
				"--count", fmt.Sprint(manyCount), "--rate", manyRate}, family...)...)
			after := labSwitchPorts(t, name, ports...)
			exact(t, res, manySenders, manyCount)
			for _, h := range res.Hosts {
				if h.HostDrops != 0 || h.SendErrors != 0 || h.TxDropped != 0 {
					t.Logf("host %s (%s): %d dropped in the host, %d send errors, %d dropped sending", h.Name, h.Role, h.HostDrops, h.SendErrors, h.TxDropped)
				}
			}
			checkEngines(t, res, string(c.backend), string(c.method))
			checkStreamsExact(t, res, c.method, c.tagged6)
			var tagged uint64
			if c.tagged6 {
				tagged = manyCount
			}
			for _, s := range senders {
				if p := labPortOf(t, after.Sub(before), s); p.TestPackets != manyCount || p.TaggedPackets != tagged || p.Drops != 0 {
					t.Errorf("switch port %s: %d test packets in, %d tagged, %d dropped: want %d, %d tagged, none dropped", s, p.TestPackets, p.TaggedPackets, p.Drops, manyCount, tagged)
				}
			}
			// Toward r1 the port sends the test packets and at most a few
			// frames of the hosts' own (neighbour discovery).
			if p := labPortOf(t, after.Sub(before), "r1"); p.TxPackets < manySenders*manyCount || p.TxPackets > manySenders*manyCount+16 {
				t.Errorf("switch port r1: sent %d frames toward its host, want the %d test packets and at most a few others", p.TxPackets, manySenders*manyCount)
			}
		})
	}
}

// checkStreamsExact checks a many-streams run (checkManyStreams) stream
// by stream against what it asked for: 17 flows of 2 streams, 34
// streams in all, none sharing its source, destination and port with
// another; every stream from its thread's source (its sender's data
// address plus the thread's index, of the run's family) to r1's address
// on its sender's port, sent and received half its flow's count, with
// nothing missing, duplicated, late or uncounted; the receiver's total
// is the generator's (17 × manyCount), and a method that knows its
// queues spreads each stream's packets over r1's two, all of them. A
// tagged IPv6 run's frames are 86 B with FCS and tag.
func checkStreamsExact(t *testing.T, res *coordinator.Result, method receiver.Method, tagged6 bool) {
	t.Helper()
	first, dst := netip.MustParseAddr("198.18.0.1"), netip.MustParseAddr("198.18.0.101")
	if tagged6 {
		first, dst = netip.MustParseAddr("2001:2::1"), netip.MustParseAddr("2001:2::65")
	}
	type key struct {
		src, dst netip.Addr
		port     uint16
	}
	seen := map[key]bool{}
	ports := map[uint16]string{}
	var received uint64
	for _, f := range res.Flows {
		var k int // the sender's index: s1 is 1
		if _, err := fmt.Sscanf(f.Sender, "s%d", &k); err != nil || k < 1 || k > manySenders || f.Receiver != "r1" {
			t.Errorf("flow %s→%s: want s1-s%d → r1", f.Sender, f.Receiver, manySenders)
			continue
		}
		if f.Streams != manyThreads || len(f.StreamDetail) != manyThreads || f.Uncounted != 0 {
			t.Errorf("flow %s→%s: %d streams (%d in detail), %d uncounted: want %d, none uncounted", f.Sender, f.Receiver, f.Streams, len(f.StreamDetail), f.Uncounted, manyThreads)
		}
		srcs := map[netip.Addr]bool{}
		a := first
		for range k - 1 {
			a = a.Next()
		}
		for range manyThreads {
			srcs[a], a = true, a.Next()
		}
		for _, s := range f.StreamDetail {
			received += s.Received
			id := key{s.Src, s.Dst, s.DstPort}
			if seen[id] || !srcs[s.Src] || s.Dst != dst {
				t.Errorf("flow %s→%s: stream %s→%s:%d: want a stream of its own from one of %v to %s", f.Sender, f.Receiver, s.Src, s.Dst, s.DstPort, srcs, dst)
			}
			seen[id] = true
			if other, ok := ports[s.DstPort]; ok && other != f.Sender {
				t.Errorf("flow %s→%s: port %d is %s's too: want a port per sender", f.Sender, f.Receiver, s.DstPort, other)
			}
			ports[s.DstPort] = f.Sender
			if half := uint64(manyCount / manyThreads); s.Sent != half || s.Received != half || s.Lost != 0 || s.Duplicates != 0 ||
				s.Missing != 0 || s.Late != 0 || s.Unrecorded != 0 || s.BeyondCapacity != 0 || s.MaxSeq != half {
				t.Errorf("stream %s→%s:%d: sent %d received %d (max_seq %d) lost %d missing %d dups %d late %d unrecorded %d seq 0 %d: want %d of %d, nothing else",
					s.Src, s.Dst, s.DstPort, s.Sent, s.Received, s.MaxSeq, s.Lost, s.Missing, s.Duplicates, s.Late, s.Unrecorded, s.BeyondCapacity, half, half)
			}
			checkQueuesOf(t, method, s, manyQueues)
		}
		if tagged6 {
			if b := f.L2BPS / f.PPS / 8; math.Abs(b-86) > 0.01 {
				t.Errorf("flow %s→%s: frames of %.2f B with FCS, want IPv6 tagged, 86", f.Sender, f.Receiver, b)
			}
		}
	}
	if len(seen) != manySenders*manyThreads || received != manySenders*manyCount {
		t.Errorf("%d streams received %d packets: want %d streams, the %d packets sent", len(seen), received, manySenders*manyThreads, manySenders*manyCount)
	}
	for _, h := range res.Hosts {
		if h.Role == "receiver" && (h.Received != manySenders*manyCount || h.Uncounted != 0 || h.BeyondCapacity != 0 || h.Unrecorded != 0) {
			t.Errorf("receiver %s: counted %d test packets, %d uncounted, %d of sequence 0, %d unrecorded: want the %d sent, all counted",
				h.Name, h.Received, h.Uncounted, h.BeyondCapacity, h.Unrecorded, manySenders*manyCount)
		}
	}
	if method.KnowsQueues() {
		t.Logf("r1's RSS spread: %s", res.RSSSpread("r1"))
	}
}

// checkQueuesOf fails t unless stream s's RSS spread is what method
// reports of a lab veth of queues queues: with xdp and afxdp, which know
// the queue a frame came in on, every packet the stream received on
// those queues; with afpacket, which does not, none.
func checkQueuesOf(t *testing.T, method receiver.Method, s coordinator.Stream, queues uint32) {
	t.Helper()
	var on uint64
	valid := true
	for _, q := range s.Queues {
		on += q.Packets
		valid = valid && q.Queue < queues
	}
	if method.KnowsQueues() && (len(s.Queues) == 0 || !valid || on != s.Received) || !method.KnowsQueues() && s.Queues != nil {
		t.Errorf("stream %s→%s:%d (method %s): received %d, queues %+v: want all of them on queues below %d (xdp, afxdp) or none (afpacket)",
			s.Src, s.Dst, s.DstPort, method, s.Received, s.Queues, queues)
	}
}

// runAgainstLab runs `linerate run --json` with args against the lab
// whose agents flags reach, within the time given, and fails t unless it
// ended ok; it returns the result, also as raw JSON (what a test checks
// of the document itself).
func runAgainstLab(t *testing.T, bin string, flags []string, within time.Duration, args ...string) (*coordinator.Result, map[string]any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append(append([]string{"run", "--json", "--log-level", "warn", "--results-dir", t.TempDir()}, flags...), args...)...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var res coordinator.Result
	var raw map[string]any
	if jerr := json.Unmarshal([]byte(stdout.String()), &res); jerr != nil {
		t.Fatalf("run %v: %v; JSON: %v\nstdout:\n%s\nstderr:\n%s", args, err, jerr, stdout.String(), stderr.String())
	}
	_ = json.Unmarshal([]byte(stdout.String()), &raw)
	if err != nil || res.Status != coordinator.StatusOK {
		t.Fatalf("run %v: exit %v, status %s: %s\n%s", args, err, res.Status, res.Error, stderr.String())
	}
	return &res, raw
}
