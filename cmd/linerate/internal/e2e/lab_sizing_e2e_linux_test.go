//go:build linux && traffic

package e2e

import (
	"fmt"
	"os"
	"testing"

	"github.com/linerate/linerate/coordinator"
	"github.com/linerate/linerate/internal/netns/nstest"
)

// TestLabFanInSized is the 34 streams into one receiver (17
// senders × 2 threads, fan-in): the receiver is armed for all of them, so
// the run is ok and balances — Σ lost == Σ switch drops == 0 — and with
// every 500th packet dropped by the switch Σ lost == Σ drops, all of it
// in the network, none uncounted.
func TestLabFanInSized(t *testing.T) {
	nstest.SkipUnlessRoot(t)
	bin := Binary(t)
	id := os.Getpid() % 10000
	args := []string{"--senders", "17", "--receivers", "1", "--pattern", "fan-in", "--threads", "2", "--duration", "2s", "--rate", "2000"}
	balance := func(t *testing.T, res *coordinator.Result) (lost uint64) {
		t.Helper()
		if len(res.Flows) != 17 {
			t.Fatalf("%d flows, want 17", len(res.Flows))
		}
		for _, f := range res.Flows {
			lost += f.Lost
			if f.Streams != 2 || f.Sent == 0 || f.Uncounted != 0 || f.LostNetwork != f.Lost {
				t.Errorf("flow %s→%s: %d streams, sent %d, lost %d (network %d, uncounted %d)", f.Sender, f.Receiver, f.Streams, f.Sent, f.Lost, f.LostNetwork, f.Uncounted)
			}
			for _, s := range f.StreamDetail {
				if s.Received == 0 || s.BeyondCapacity != 0 {
					t.Errorf("stream %s→%s:%d: sent %d, received %d, beyond capacity %d", s.Src, s.Dst, s.DstPort, s.Sent, s.Received, s.BeyondCapacity)
				}
			}
		}
		for _, h := range res.Hosts {
			if h.Uncounted != 0 || h.BeyondCapacity != 0 {
				t.Errorf("host %s: uncounted %d, beyond capacity %d", h.Name, h.Uncounted, h.BeyondCapacity)
			}
		}
		if d := res.Lab.Drops(); lost != d {
			t.Errorf("Σ lost %d, Σ switch drops %d", lost, d)
		}
		return lost
	}
	t.Run("34-streams", func(t *testing.T) {
		res := labRun(t, bin, fmt.Sprintf("z%d", id), args...)
		// The hosts' checks are the lab's (a veth, no clock daemon): not
		// the sizing's to judge.
		if lost := balance(t, res); lost != 0 || len(res.OtherWarnings()) != 0 {
			t.Errorf("lost %d, warnings %q: want none but the hosts' checks'", lost, res.OtherWarnings())
		}
	})
	t.Run("34-streams-loss-every-500", func(t *testing.T) {
		res := labRun(t, bin, fmt.Sprintf("y%d", id), append(args, "--loss-every", "500")...)
		if lost := balance(t, res); lost == 0 {
			t.Error("no loss with --loss-every 500")
		}
	})
}
