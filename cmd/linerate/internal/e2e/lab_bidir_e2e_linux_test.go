//go:build linux && traffic

package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/linerate/linerate/cmd/linerate/internal/lab"
	"github.com/linerate/linerate/coordinator"
	"github.com/linerate/linerate/internal/netns/nstest"
	"github.com/linerate/linerate/pktgen/pktgentest"
)

// directionBooks checks a run that turns flows round direction by
// direction: every flow of it marked, every flow's books balanced (what
// was not received is lost, all of it in the network, nothing unsent or
// duplicated), the run's totals of the direction the sums of its flows,
// and its lost packets the switch's drops of that direction. It returns
// each direction's lost packets.
func directionBooks(t *testing.T, res *coordinator.Result, want map[coordinator.Direction]int) map[coordinator.Direction]uint64 {
	t.Helper()
	lost := map[coordinator.Direction]uint64{}
	sent := map[coordinator.Direction]uint64{}
	flows := map[coordinator.Direction]int{}
	for _, f := range res.Flows {
		if _, ok := want[f.Direction]; !ok {
			t.Errorf("flow %s→%s: direction %q, want one of %v", f.Sender, f.Receiver, f.Direction, want)
		}
		flows[f.Direction]++
		lost[f.Direction] += f.Lost
		sent[f.Direction] += f.Sent
		if f.Sent == 0 || f.Received+f.Lost != f.Sent || f.Duplicates != 0 || f.LostNetwork+f.LostSenderHost != f.Lost {
			t.Errorf("flow %s→%s (%s): sent %d received %d lost %d (network %d, sender host %d) refused %d dups %d: want received + lost = sent, every loss the network's or a drop the sender's device counted",
				f.Sender, f.Receiver, f.Direction, f.Sent, f.Received, f.Lost, f.LostNetwork, f.LostSenderHost, f.Refused, f.Duplicates)
		}
	}
	senderHostLossSeen(t, res)
	if len(res.Directions) != len(want) || res.Lab == nil || len(res.Lab.Directions) != len(want) {
		t.Fatalf("directions %+v, the switch's %+v: want %d of each", res.Directions, res.Lab, len(want))
	}
	for i, d := range res.Directions {
		if d.Flows != want[d.Direction] || d.Flows != flows[d.Direction] || d.Lost != lost[d.Direction] || d.Sent != sent[d.Direction] {
			t.Errorf("direction %s: %d flows, sent %d, lost %d; its flows: %d (want %d), sent %d, lost %d",
				d.Direction, d.Flows, d.Sent, d.Lost, flows[d.Direction], want[d.Direction], sent[d.Direction], lost[d.Direction])
		}
		sw := res.Lab.Directions[i]
		if sw.Direction != d.Direction {
			t.Fatalf("the switch's direction %d is %s, the run's %s", i, sw.Direction, d.Direction)
		}
		// A frame a sender's own veth dropped (the port's ring full) is
		// lost in the sender host and never reached the switch.
		lostAreDrops(t, "direction "+string(d.Direction), d.LostNetwork, sw.Drops)
		t.Logf("%s %v→%v: %d flows, sent %d, lost %d; the switch dropped %d of that way", d.Direction, d.Senders, d.Receivers, d.Flows, d.Sent, d.Lost, sw.Drops)
	}
	// Every drop of the switch is of one direction or the other.
	var split uint64
	for _, d := range res.Lab.Directions {
		split += d.Drops
	}
	if drops := res.Lab.Drops(); split != drops {
		t.Errorf("the switch's drops per direction %+v do not add up to its %d drops", res.Lab.Directions, drops)
	}
	return lost
}

// TestLabRunBidir drives `linerate lab run --bidir` and `--reverse` end to
// end: every host's agent sends and receives, and each direction's books
// balance against what the switch dropped of that direction.
func TestLabRunBidir(t *testing.T) {
	nstest.SkipUnlessRoot(t)
	bin := Binary(t)
	id := os.Getpid() % 10000
	both := map[coordinator.Direction]int{coordinator.Forward: 2, coordinator.Reverse: 2}

	t.Run("bidir-2x2", func(t *testing.T) {
		res := labRun(t, bin, fmt.Sprintf("b%d", id), "--bidir", "--senders", "2", "--receivers", "2", "--count", "20000")
		if len(res.Flows) != 4 {
			t.Fatalf("%d flows, want 4", len(res.Flows))
		}
		directionBooks(t, res, both)
		for _, f := range res.Flows {
			if f.Sent != 20000 {
				t.Errorf("flow %s→%s sent %d, want 20000", f.Sender, f.Receiver, f.Sent)
			}
		}
		// Every host sent and received, as role both; every sending
		// host's streams on a port of its own, so no receiver's table
		// mixes two flows.
		ports := map[uint16]string{}
		for _, f := range res.Flows {
			for _, s := range f.StreamDetail {
				if o, ok := ports[s.DstPort]; ok && o != f.Sender {
					t.Errorf("port %d: streams of %s and %s", s.DstPort, o, f.Sender)
				}
				ports[s.DstPort] = f.Sender
			}
		}
		if len(ports) != 4 {
			t.Errorf("ports %v: want one per sending host", ports)
		}
		for _, h := range res.Hosts {
			if h.Role != "both" || h.Sent != 20000 || h.Received == 0 || h.Backend == "" || h.Method == "" {
				t.Errorf("host %s: role %s sent %d received %d backend %q method %q: want both, each way", h.Name, h.Role, h.Sent, h.Received, h.Backend, h.Method)
			}
		}
		// Both ways start at the one instant: every stream's first frame
		// within the start's spread of the others.
		if sp := res.StartSpread; sp == nil || sp.FirstFrame == nil || sp.FirstFrame.Streams != 4 {
			t.Errorf("start spread %+v: want the first frames of all four streams", sp)
		}
	})
	// Fan-in both ways: r1 sends to s1 and s2 while both send to it. Every
	// port drops every 1000th test packet from its host: s1's and s2's
	// ports 12 each of their 12,500 (24 forward), r1's 25 of its 25,000
	// (reverse). The directions differ, and each balances to the packet.
	// Paced: r1's two unpaced flows into its one port overflow that
	// port's ring (the veth's drops, which afpacket counts as send errors
	// and the host as tx_dropped), which is not what this test is about.
	t.Run("bidir-fan-in-loss", func(t *testing.T) {
		res := labRun(t, bin, fmt.Sprintf("c%d", id), "--bidir", "--pattern", "fan-in", "--senders", "2", "--receivers", "1",
			"--loss-every", "1000", "--count", "12500", "--rate", "20000", "--backend", "afpacket")
		lost := directionBooks(t, res, both)
		if lost[coordinator.Forward] != 24 || lost[coordinator.Reverse] != 25 {
			t.Errorf("lost %d forward, %d reverse: want 24 and 25", lost[coordinator.Forward], lost[coordinator.Reverse])
		}
		for _, d := range res.Lab.Directions {
			if want := map[coordinator.Direction]uint64{coordinator.Forward: 24, coordinator.Reverse: 25}[d.Direction]; d.Drops != want {
				t.Errorf("the switch dropped %d %s, want %d", d.Drops, d.Direction, want)
			}
		}
	})
	// A shaper on every port: each direction arrives at no more than the
	// shaped rate, and its books balance whether the veth path pushes
	// back or the shaper drops.
	t.Run("bidir-shaped", func(t *testing.T) {
		pktgentest.SkipUnlessLiveFrames(t)
		const seconds = 2
		res := labRun(t, bin, fmt.Sprintf("d%d", id), "--bidir", "--senders", "1", "--receivers", "1", "--shape", "50mbit",
			"--backend", "xdp", "--duration", fmt.Sprintf("%ds", seconds))
		directionBooks(t, res, map[coordinator.Direction]int{coordinator.Forward: 1, coordinator.Reverse: 1})
		want := 50e6 / 8 / 60
		for _, f := range res.Flows {
			if arrived := float64(f.Received) / f.DurationSec; arrived > 1.05*want || f.PPS > 1.05*want {
				t.Errorf("flow %s→%s (%s): %.0f pps arrived behind a %.0f pps shaper", f.Sender, f.Receiver, f.Direction, arrived, want)
			}
		}
	})
	// --reverse: the named receiver sends to the named sender.
	t.Run("reverse-1x1", func(t *testing.T) {
		res := labRun(t, bin, fmt.Sprintf("v%d", id), "--reverse", "--senders", "1", "--receivers", "1", "--loss-every", "1000", "--count", "10000")
		directionBooks(t, res, map[coordinator.Direction]int{coordinator.Reverse: 1})
		if len(res.Flows) != 1 {
			t.Fatalf("%d flows, want 1", len(res.Flows))
		}
		if f := res.Flows[0]; f.Sender != "r1" || f.Receiver != "s1" || f.Direction != coordinator.Reverse || f.Sent != 10000 || f.Lost != 10 {
			t.Errorf("flow %s→%s (%s): sent %d lost %d; want r1→s1 reverse, 10000 sent, 10 lost", f.Sender, f.Receiver, f.Direction, f.Sent, f.Lost)
		}
		roles := map[string]string{}
		for _, h := range res.Hosts {
			roles[h.Name] = h.Role
		}
		if roles["s1"] != "receiver" || roles["r1"] != "sender" {
			t.Errorf("roles %v: want s1 receiver, r1 sender", roles)
		}
		// The switch saw test packets from r1 only.
		for _, p := range res.Lab.SwitchPorts {
			if want := map[string]uint64{"r1": 10000, "s1": 0}[p.Name]; p.TestPackets != want {
				t.Errorf("port %s: %d test packets in, want %d", p.Name, p.TestPackets, want)
			}
		}
	})
}

// TestRunBidirRefusesOneWayAgents runs `linerate run --bidir` against a lab
// whose agents run as sender and receiver only: refused before any lease,
// naming the host and how to start it, exit non-zero, the agents as they
// were (a run one way goes through after it).
func TestRunBidirRefusesOneWayAgents(t *testing.T) {
	nstest.SkipUnlessRoot(t)
	bin := Binary(t)
	name := fmt.Sprintf("o%d", os.Getpid()%10000)
	cmd, out := startLabUp(t, bin, name)
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGINT)
		_ = cmd.Wait()
		assertNoLab(t, name, lab.DefaultDir(name))
	}()
	flags := memberFlags(t, out)
	run := func(extra ...string) (*coordinator.Result, string, error) {
		args := append([]string{"run", "--senders", "s1", "--receivers", "r1", "--count", "1000", "--json", "--log-level", "warn", "--results-dir", t.TempDir()}, flags...)
		c := exec.Command(bin, append(args, extra...)...)
		var stderr strings.Builder
		c.Stderr = &stderr
		o, err := c.Output()
		var res coordinator.Result
		if jerr := json.Unmarshal(o, &res); jerr != nil {
			t.Fatalf("run %v: %v; JSON: %v\n%s\n%s", extra, err, jerr, o, stderr.String())
		}
		return &res, stderr.String(), err
	}
	for _, tc := range []struct {
		flag, agent string
		want        []string
	}{
		{"--bidir", "s1", []string{"agent s1", "runs as sender", "cannot be both a sender and a receiver", "--role both"}},
		{"--reverse", "s1", []string{"agent s1", "runs as sender", "cannot be a receiver", "--reverse"}},
	} {
		res, stderr, err := run(tc.flag)
		if err == nil || res.Status != coordinator.StatusFailed || res.FailedPhase != coordinator.PhaseDiscover {
			t.Errorf("run %s: exit %v, status %s phase %s: want a failure at discover", tc.flag, err, res.Status, res.FailedPhase)
		}
		for _, w := range tc.want {
			if !strings.Contains(res.Error, w) || !strings.Contains(stderr, w) {
				t.Errorf("run %s: error %q, stderr %q: want %q in both", tc.flag, res.Error, stderr, w)
			}
		}
		if len(res.Flows) != 0 {
			t.Errorf("run %s: flows %+v", tc.flag, res.Flows)
		}
	}
	// Nothing was leased or left behind: the same agents run one way.
	res, stderr, err := run()
	if err != nil || res.Status != coordinator.StatusOK || len(res.Flows) != 1 || res.Flows[0].Direction != "" || res.Directions != nil {
		t.Errorf("run one way after the refusals: %v, %s %s: %+v\n%s", err, res.Status, res.Error, res.Flows, stderr)
	}
}
