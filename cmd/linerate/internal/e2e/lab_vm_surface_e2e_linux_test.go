//go:build linux && traffic

package e2e

import (
	"context"
	"encoding/json"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/linerate/linerate/cmd/linerate/internal/lab"
	"github.com/linerate/linerate/coordinator"
)

// vmRun is TestLabVMHosts's run: `linerate run` on the lab's agents,
// failing the test unless the run is ok.
type vmRun func(t *testing.T, args ...string) (*coordinator.Result, map[string]any)

// vmSurfaceCount is each surface run's packets per flow: a multiple of
// every copy count and thread count below, small enough for TCG.
const vmSurfaceCount = 8000

// checkVMSurface runs kernel pktgen's surface beyond one frame per
// packet on the VM hosts' virtio_net (which shares skbs, unlike veth):
//
//   - --burst 4 with a UDP source port range and --node-alloc: the
//     receiver counts the copies as repeats, the books are exact
//     against the count pktgen was given (sent = received = the count,
//     frames on the wire), and every stream's sequence, counted in
//     steps of the copies, has count/threads/4 built frames, none
//     missing; the source ports spread every stream over all 4 of the
//     receiver's queues (its XDP program counts by rx_queue_index: the
//     host's multiqueue tap picks the queue by each frame's flow hash,
//     which takes in the ports);
//   - --clone-skb 2 with --queue-map 0-3: one thread per CPU, each
//     walking the 4 TX queues, exact the same way;
//   - --queue-map 0-7 refused by the sender's agent, naming queue_map
//     and the 4 TX queues its device has.
func checkVMSurface(t *testing.T, run vmRun, bin string, flags []string) {
	t.Run("burst-ports-node", func(t *testing.T) {
		res, _ := run(t, "--senders", "s1", "--receivers", "r1", "--count", strconv.Itoa(vmSurfaceCount), "--rate", vmRate,
			"--burst", "4", "--udp-src", "1024-1087", "--node-alloc")
		checkSurfaceBooks(t, res, 4, lab.DefaultVMQueues)
		for _, f := range res.Flows {
			for _, s := range f.StreamDetail {
				if len(s.Queues) != lab.DefaultVMQueues {
					t.Errorf("stream %s→%s: on receive queues %+v: want all %d (its source ports walk 1024-1087)", s.Src, s.Dst, s.Queues, lab.DefaultVMQueues)
				}
			}
		}
		t.Logf("rss spread: %s", res.RSSSpread("r1"))
	})
	t.Run("clone-queue-map", func(t *testing.T) {
		res, _ := run(t, "--senders", "s1", "--receivers", "r1", "--count", strconv.Itoa(vmSurfaceCount), "--rate", vmRate,
			"--clone-skb", "2", "--queue-map", "0-3")
		checkSurfaceBooks(t, res, 2, len(vmNode1))
	})
	t.Run("queue-map-refused", func(t *testing.T) {
		// Refused at configure, in seconds: the test's own deadline bounds it.
		ctx, cancel := context.WithCancel(context.Background())
		if d, ok := t.Deadline(); ok {
			ctx, cancel = context.WithDeadline(context.Background(), d)
		}
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, append(append([]string{"run", "--json", "--log-level", "warn", "--results-dir", t.TempDir()}, flags...),
			"--senders", "s1", "--receivers", "r1", "--count", strconv.Itoa(vmSurfaceCount), "--rate", vmRate, "--queue-map", "0-7")...)
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		var res coordinator.Result
		_ = json.Unmarshal([]byte(stdout.String()), &res)
		msg := res.Error + stderr.String()
		if err == nil || res.Status == coordinator.StatusOK || !strings.Contains(msg, "queue_map") || !strings.Contains(msg, "4 TX queues: want 0-3") {
			t.Errorf("--queue-map 0-7 on a 4-queue NIC: exit %v, status %s, error %q: want refused naming queue_map and the 4 TX queues\n%s", err, res.Status, res.Error, stderr.String())
		}
	})
}

// checkSurfaceBooks checks a surface run of one flow of vmSurfaceCount
// packets over threads threads (streams), each frame sent copies times:
// sent and received are the count, nothing lost or duplicated, and every
// stream's sequence has its share of built frames, none missing.
func checkSurfaceBooks(t *testing.T, res *coordinator.Result, copies, threads int) {
	t.Helper()
	if len(res.Flows) != 1 {
		t.Fatalf("%d flows, want 1", len(res.Flows))
	}
	f := res.Flows[0]
	if f.Sent != vmSurfaceCount || f.Received != f.Sent || f.Lost != 0 || f.Duplicates != 0 {
		t.Errorf("flow %s→%s: sent %d received %d lost %d duplicates %d: want %d each way, none lost or duplicated", f.Sender, f.Receiver,
			f.Sent, f.Received, f.Lost, f.Duplicates, vmSurfaceCount)
	}
	if res.Copies != copies {
		t.Errorf("result's copies %d, want %d", res.Copies, copies)
	}
	built := uint64(vmSurfaceCount / threads / copies)
	if len(f.StreamDetail) != threads {
		t.Errorf("%d streams, want %d (one per sender thread)", len(f.StreamDetail), threads)
	}
	for _, s := range f.StreamDetail {
		if s.Sent != uint64(vmSurfaceCount/threads) || s.MaxSeq != built || s.Missing != 0 || s.Duplicates != 0 || s.Late != 0 {
			t.Errorf("stream %s→%s: sent %d, max_seq %d, missing %d %v, duplicates %d, late %d: want %d sent, %d built frames (%d copies each), none missing",
				s.Src, s.Dst, s.Sent, s.MaxSeq, s.Missing, s.MissingRanges, s.Duplicates, s.Late, vmSurfaceCount/threads, built, copies)
		}
	}
}
