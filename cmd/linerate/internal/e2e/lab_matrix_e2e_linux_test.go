//go:build linux && traffic

package e2e

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/linerate/linerate/internal/netns/nstest"
	"github.com/linerate/linerate/pktgen"
	"github.com/linerate/linerate/pktgen/pktgentest"
	"github.com/linerate/linerate/receiver"
)

// matrixCount is each run's packets in the backend × method matrix: a
// few thousand, paced (matrixRate), so that the nine runs stay short and
// any loss is the switch's, which exact then names.
const (
	matrixCount = "3000"
	matrixRate  = "20000"
)

// TestLabMatrix runs every userspace sender backend against every
// receiver method through one netns lab (`lab up` once, then `linerate
// run` per pair, as a person would): each pair balances exactly per
// stream (exact: a run against a lab that is up has no switch counts, so
// nothing may be lost), and the receiver's report says the method that ran
// and, for xdp and afxdp, the RSS spread of its one stream (all on one
// of the lab's veth's two queues, as many packets as it received).
// AF_XDP's need_wakeup is off on the veth by default, on where the run
// asks it of both ends (afxdp × afxdp), and the report says so on both
// ends. The kernel backend is VM-only (TestLabVMHosts).
//
// The lab is the one checkManyStreams needs (17 senders, veths of two
// queues, a VLAN); the matrix uses s1 and r1 of it, and then the
// many-streams runs fan 34 streams in on r1 ("streams").
func TestLabMatrix(t *testing.T) {
	nstest.SkipUnlessRoot(t)
	bin := Binary(t)
	name := fmt.Sprintf("x%d", os.Getpid()%10000)
	_, flags := labUpFor(t, bin, name, manyStreamsLab()...)
	for _, backend := range []pktgen.BackendName{pktgen.BackendXDP, pktgen.BackendAFPacket, pktgen.BackendAFXDP} {
		for _, method := range []receiver.Method{receiver.MethodXDP, receiver.MethodAFPacket, receiver.MethodAFXDP} {
			t.Run(string(backend)+"×"+string(method), func(t *testing.T) {
				if backend == pktgen.BackendXDP {
					pktgentest.SkipUnlessLiveFrames(t)
				}
				// AF_XDP at both ends forces need_wakeup on (both are
				// given it); the other AF_XDP pairs leave it to auto.
				wakeup, wakeSaid := pktgen.NeedWakeupAuto, "need_wakeup off (auto)"
				if backend == pktgen.BackendAFXDP && method == receiver.MethodAFXDP {
					wakeup, wakeSaid = pktgen.NeedWakeupOn, "need_wakeup on: asked for"
				}
				res, _ := runAgainstLab(t, bin, flags, 2*time.Minute, "--senders", "s1", "--receivers", "r1", "--backend", string(backend), "--method", string(method),
					"--count", matrixCount, "--rate", matrixRate, "--need-wakeup", string(wakeup))
				exact(t, res, 1, 3000)
				checkEngines(t, res, string(backend), string(method))
				for _, h := range res.Hosts {
					// AF_XDP on a veth: need_wakeup chosen off by auto
					// (a virtual device), or on as asked, and the report
					// says so.
					var said string
					switch {
					case h.Role == "sender" && backend == pktgen.BackendAFXDP:
						said = strings.Join(h.BackendNotes, "; ")
					case h.Role == "receiver" && method == receiver.MethodAFXDP:
						said = h.MethodReason
					default:
						continue
					}
					if !strings.Contains(said, wakeSaid) || wakeup == pktgen.NeedWakeupAuto && !strings.Contains(said, "veth") {
						t.Errorf("host %s (%s): the report says %q: want %q for the veth", h.Name, h.Role, said, wakeSaid)
					}
				}
				for _, s := range res.Flows[0].StreamDetail {
					checkQueues(t, method, s)
				}
			})
		}
	}
	t.Run("streams", func(t *testing.T) { checkManyStreams(t, bin, name, flags) })
}
