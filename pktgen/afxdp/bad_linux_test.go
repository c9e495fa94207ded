//go:build linux && traffic

package afxdp

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/linerate/linerate/pktgen"
	"github.com/linerate/linerate/pktgen/pktgentest"
)

// TestBadInput: an interface that does not exist, a queue it lacks, and
// a need_wakeup value that is none of the valid ones are refused with
// errors that name them, before anything is sent.
func TestBadInput(t *testing.T) {
	s := pktgentest.NewSetup(t, 1, []int{0}, 100, nil)
	b := newBackend(t, s)
	c := s.Cfg
	c.Device, c.Count = "nosuch0", 10
	_, err := b.Run(context.Background(), c, nil)
	if !errors.Is(err, pktgen.ErrNoDevice) || !strings.Contains(err.Error(), `"nosuch0"`) {
		t.Errorf("no such interface: %v", err)
	}
	if err := b.Probe("nosuch0"); !errors.Is(err, pktgen.ErrNoDevice) {
		t.Errorf("probe of no such interface: %v", err)
	}
	c = s.Cfg
	c.Count, c.Queues = 10, []int{3}
	_, err = b.Run(context.Background(), c, nil)
	if err == nil || !strings.Contains(err.Error(), "queue 3") {
		t.Errorf("a queue the veth lacks: %v", err)
	}
	// Two threads on a one-queue veth: queue 1 is refused at the probe,
	// which `userspace` then passes by (pktgen/choose).
	if err := b.ProbeQueues(s.Cfg.Device, 2); !errors.Is(err, pktgen.ErrUnsupported) || !strings.Contains(err.Error(), "2 threads need a socket on each of queues 0-1") || !strings.Contains(err.Error(), "queue 1") {
		t.Errorf("probe for 2 threads on 1 queue: %v", err)
	}
	if err := b.ProbeQueues(s.Cfg.Device, 1); err != nil {
		t.Errorf("probe for 1 thread: %v", err)
	}
	c = s.Cfg
	c.Count, c.NeedWakeup = 10, "sometimes"
	_, err = b.Run(context.Background(), c, nil)
	if !errors.Is(err, pktgen.ErrConfig) || !strings.Contains(err.Error(), `need_wakeup: "sometimes": valid values are auto, on and off`) {
		t.Errorf("need_wakeup sometimes: %v", err)
	}
	if st, err := s.Sink.Stats(); err != nil || st.Test != 0 {
		t.Errorf("refused runs sent %d frames (%v)", st.Test, err)
	}
}
