//go:build linux && traffic

package receiver

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

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
			// A bound packet socket is not yet counting (its filter
			// drops all until every ring has joined the fanout group):
			// the frames go out once Count logs that it is armed.
			armed := &armedWriter{t: t, at: make(chan struct{})}
			log := hclog.New(&hclog.LoggerOptions{Name: t.Name(), Level: hclog.Debug, Output: armed})
			go func() {
				var res result
				_ = p.B.NS.Do(func() error {
					res.rep, res.err = Count(t.Context(), Options{Iface: p.B.Name, Method: MethodAFPacket, Window: 1 << 10, Logger: log}, tt.until, func(pr Progress) {
						mu.Lock()
						progress = append(progress, pr)
						mu.Unlock()
					})
					return nil
				})
				done <- res
			}()
			select {
			case <-armed.at:
			case res := <-done:
				t.Fatalf("Count returned before it was armed: %v", res.err)
			case <-time.After(5 * time.Second):
				t.Fatal("not counting after 5s")
			}
			if packetSockets(t, p.B) == 0 {
				t.Fatal("armed with no packet socket on lrb")
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

// armedWriter passes log lines to t.Log and closes at when Count logs
// that it is armed.
type armedWriter struct {
	t    *testing.T
	at   chan struct{}
	once sync.Once
}

func (w *armedWriter) Write(p []byte) (int, error) {
	line := strings.TrimRight(string(p), "\n")
	w.t.Log(line)
	if strings.Contains(line, "armed: counting") {
		w.once.Do(func() { close(w.at) })
	}
	return len(p), nil
}
