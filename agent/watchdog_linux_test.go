//go:build linux && traffic

package agent

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/linerate/linerate/internal/gentest"
	"github.com/linerate/linerate/internal/netns/nstest"
	"github.com/linerate/linerate/pktgen"
	"github.com/linerate/linerate/pktgen/afpacket"
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

// The real AF_PACKET backend, unpaced, 10^9 frames over a veth pair,
// stopped by the watchdog in its midst (its deadline cut to 500 ms here:
// the formula is TestDeadline's): the result fails saying why, Watch
// shows what it sent, and the backend closed its sockets as at the end of
// any run.
func TestWatchdogStopsARealSend(t *testing.T) {
	p := nstest.NewPair(t, 1)
	if err := p.A.WaitUp(3 * time.Second); err != nil {
		t.Fatal(err)
	}
	s := unitService(t, RoleSender, fakeNetOS{}).tx
	s.watchdog = watchdogTimes{deadline: func(c *pktgen.Config) pktgen.Deadline {
		return pktgen.Deadline{Expected: 400 * time.Millisecond, Limit: 500 * time.Millisecond, Basis: "cut short for the test"}
	}}
	be := afpacket.New(testLog(t))
	be.ThreadInit = gentest.Enter(p.A.NS.Name)
	cfg := pktgen.Config{Device: p.A.Name, CPUs: []int{0}, Count: 1e9, PktSize: 60,
		DstMin: p.B.Addr.Addr(), SrcMin: p.A.Addr.Addr(), DstMAC: p.B.MAC, UDPSrcMin: 9, UDPSrcMax: 9, UDPDstMin: 9, UDPDstMax: 9}
	if err := s.configure(cfg, be); err != nil {
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
}
