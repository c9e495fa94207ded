//go:build linux && traffic

package agent

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/vishvananda/netlink"

	"github.com/linerate/linerate/pktgen"
	"github.com/linerate/linerate/pktgen/afpacket"
	"github.com/linerate/linerate/pktgen/pktgentest"
	"github.com/linerate/linerate/pktgen/xdp"
)

// packetSockets counts the AF_PACKET sockets open in the calling
// thread's network namespace.
func packetSockets() (int, error) {
	b, err := os.ReadFile("/proc/thread-self/net/packet")
	if err != nil {
		return 0, err
	}
	return strings.Count(strings.TrimSpace(string(b)), "\n"), nil // the first line is the header
}

// The real userspace backends (AF_PACKET and XDP), unpaced, 10^9 frames
// over a veth pair, stopped by the watchdog in their midst (the deadline
// cut to 500 ms here: the formula is TestDeadline's): the result fails
// saying why, Watch shows what was sent, and the backend closed its
// sockets as at the end of any run.
func TestWatchdogStopsARealSend(t *testing.T) {
	for _, tc := range []struct {
		name string
		be   func(enter func() error) pktgen.Backend
	}{
		{"afpacket", func(enter func() error) pktgen.Backend {
			b := afpacket.New(testLog(t))
			b.ThreadInit = enter
			return b
		}},
		{"xdp", func(enter func() error) pktgen.Backend {
			b := xdp.New(testLog(t))
			b.ThreadInit = enter
			return b
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name == "xdp" {
				pktgentest.SkipUnlessLiveFrames(t)
			}
			watchdogRealSend(t, tc.be)
		})
	}
}

func watchdogRealSend(t *testing.T, newBackend func(enter func() error) pktgen.Backend) {
	bed := pktgentest.NewSetup(t, 1, []int{0}, 1<<16, func(c *pktgen.Config) { c.Count = 1e9 })
	p := bed.Pair
	s := unitService(t, RoleSender, fakeNetOS{}).tx
	s.watchdog = watchdogTimes{deadline: func(c *pktgen.Config) pktgen.Deadline {
		return pktgen.Deadline{Expected: 400 * time.Millisecond, Limit: 500 * time.Millisecond, Basis: "cut short for the test"}
	}}
	be := newBackend(pktgentest.Enter(p.A.NS.Name))
	if err := s.configure(bed.Cfg, be, nil); err != nil {
		t.Fatal(err)
	}
	r, _ := s.schedule()
	ctx := ctxT(t, 20*time.Second)
	at := time.Now().Add(50 * time.Millisecond)
	if _, err := s.start(ctx, r, at); err != nil {
		t.Fatal(err)
	}
	_, err := s.result(ctx, r, true)
	took := time.Since(at)
	if !errors.Is(err, ErrOverrun) || !strings.Contains(err.Error(), "the send was still running 500ms after its start, past its deadline (400ms expected: cut short for the test)") {
		t.Fatalf("result: %v, want the watchdog's overrun", err)
	}
	if took < 500*time.Millisecond || took > 5*time.Second {
		t.Errorf("stopped %s after the start, want at its 500ms deadline", took)
	}
	st := s.state()
	if st.phase != phaseFailed || st.progress.Packets == 0 || st.progress.Packets >= 1e9 {
		t.Errorf("state after the overrun: %+v, want failed with part of the 10^9 frames sent", st)
	}
	t.Logf("sent %d of 10^9 frames before the watchdog stopped the send", st.progress.Packets)
	var open int
	if err := p.A.NS.Do(func() (err error) { open, err = packetSockets(); return err }); err != nil || open != 0 {
		t.Errorf("AF_PACKET sockets left open in the sender's namespace: %d (%v)", open, err)
	}
	err = p.A.NS.Do(func() error {
		l, err := netlink.LinkByName(p.A.Name)
		if err == nil && l.Attrs().Xdp != nil && l.Attrs().Xdp.Attached {
			err = fmt.Errorf("an XDP program (id %d) is still attached", l.Attrs().Xdp.ProgId)
		}
		return err
	})
	if err != nil {
		t.Errorf("the sending device after the stop: %v", err)
	}
}
