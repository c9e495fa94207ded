//go:build linux && traffic

package receiver

import (
	"sync"
	"testing"
	"time"

	"github.com/linerate/linerate/internal/netns/nstest"
)

// Count counts until its duration, or until the traffic has been idle,
// reports its progress and detaches at its end; a missing interface
// names the interfaces there are.
func TestCount(t *testing.T) {
	for _, tt := range []struct {
		name  string
		until Until
	}{
		{"duration", Until{Duration: 1500 * time.Millisecond}},
		{"until idle", Until{Idle: 300 * time.Millisecond}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := nstest.NewPair(t, 1)
			var mu sync.Mutex
			var progress []Progress
			type result struct {
				rep *Report
				err error
			}
			done := make(chan result, 1)
			go func() {
				var res result
				_ = p.B.NS.Do(func() error {
					res.rep, res.err = Count(t.Context(), Options{Iface: p.B.Name, Method: MethodAFPacket, Window: 1 << 10, Logger: testLogger(t)}, tt.until, func(pr Progress) {
						mu.Lock()
						progress = append(progress, pr)
						mu.Unlock()
					})
					return nil
				})
				done <- res
			}()
			for deadline := time.Now().Add(5 * time.Second); packetSockets(t, p.B) == 0; time.Sleep(10 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatal("not counting after 5s")
				}
			}
			sendFrames(t, p.A, [][]byte{withMACs(testFrame{seq: 1}.bytes(), p.B.MAC, p.A.MAC), withMACs(testFrame{seq: 2}.bytes(), p.B.MAC, p.A.MAC)})
			var res result
			select {
			case res = <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("Count did not stop")
			}
			if res.err != nil {
				t.Fatal(res.err)
			}
			if len(res.rep.Streams) != 1 || res.rep.Streams[0].Received != 2 {
				t.Errorf("report %+v", res.rep.Streams)
			}
			if packetSockets(t, p.B) != 0 {
				t.Error("packet sockets left after Count")
			}
			mu.Lock()
			defer mu.Unlock()
			if tt.until.Duration > 0 && (len(progress) == 0 || progress[len(progress)-1].TestPackets != 2) {
				t.Errorf("progress %+v, want a report of the 2 test packets", progress)
			}
		})
	}
	p := nstest.NewPair(t, 1)
	err := p.B.NS.Do(func() error {
		_, err := Count(t.Context(), Options{Iface: "nosuch0", Names: Names{Iface: "--iface"}}, Until{}, nil)
		return err
	})
	if err == nil || err.Error() != "--iface nosuch0: no such interface (here: lo, "+p.B.Name+")" {
		t.Errorf("missing interface: %v", err)
	}
}
