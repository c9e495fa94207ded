//go:build linux && traffic

package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/linerate/linerate/internal/netns/nstest"
	"github.com/linerate/linerate/pktgen"
)

// recvFrames builds one stream's frames from lra to lrb: sequences 1..200
// without 50..59, and 7 twice.
func recvFrames(p *nstest.Pair) [][]byte {
	var out [][]byte
	for s := uint32(1); s <= 200; s++ {
		if s >= 50 && s <= 59 {
			continue
		}
		n := 1
		if s == 7 {
			n = 2
		}
		for range n {
			b := make([]byte, 60)
			copy(b[0:], p.B.MAC)
			copy(b[6:], p.A.MAC)
			binary.BigEndian.PutUint16(b[12:], 0x0800)
			ip := b[14:34]
			ip[0], ip[8], ip[9] = 0x45, 32, 17
			binary.BigEndian.PutUint16(ip[2:], 46)
			copy(ip[12:], p.A.Addr.Addr().AsSlice())
			copy(ip[16:], p.B.Addr.Addr().AsSlice())
			binary.BigEndian.PutUint16(b[34:], 9)
			binary.BigEndian.PutUint16(b[36:], 9)
			binary.BigEndian.PutUint16(b[38:], 26)
			now := time.Now() // stamped as a generator stamps: when built, just before it is sent
			pktgen.Header{Seq: s, TvSec: uint32(now.Unix()), TvUsec: uint32(now.Nanosecond() / 1000)}.Encode(b[42:])
			out = append(out, b)
		}
	}
	return out
}

func sendRaw(t *testing.T, p *nstest.Pair, frames [][]byte) {
	t.Helper()
	err := p.A.NS.Do(func() error {
		fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		for _, f := range frames {
			if err := unix.Sendto(fd, f, 0, &unix.SockaddrLinklayer{Ifindex: p.A.Index, Halen: 6}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// readyWriter collects stderr and closes ready when the receiver says it
// is counting.
type readyWriter struct {
	mu    sync.Mutex
	b     strings.Builder
	once  sync.Once
	ready chan struct{}
}

func (w *readyWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.b.Write(p)
	if strings.Contains(w.b.String(), "receiver counting") {
		w.once.Do(func() { close(w.ready) })
	}
	return len(p), nil
}

func (w *readyWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// recvIn runs `linerate recv` inside lrb's namespace; it returns once the
// receiver counts, with a function that waits for the command's end.
func recvIn(t *testing.T, ctx context.Context, p *nstest.Pair, args ...string) func() (int, string, string) {
	t.Helper()
	var out strings.Builder
	errw := &readyWriter{ready: make(chan struct{})}
	done := make(chan int, 1)
	go func() {
		var code int
		_ = p.B.NS.Do(func() error {
			code = run(ctx, append([]string{"recv", "--iface", "lrb"}, args...), &out, errw)
			return nil
		})
		done <- code
	}()
	select {
	case <-errw.ready:
	case code := <-done:
		t.Fatalf("recv exited %d before counting: %s", code, errw.String())
	case <-time.After(10 * time.Second):
		t.Fatalf("recv not counting after 10s: %s", errw.String())
	}
	return func() (int, string, string) {
		select {
		case code := <-done:
			return code, out.String(), errw.String()
		case <-time.After(20 * time.Second):
			t.Fatalf("recv did not stop: %s", errw.String())
			return 0, "", ""
		}
	}
}

func xdpOn(t *testing.T, p *nstest.Pair) bool {
	t.Helper()
	var on bool
	if err := p.B.NS.Do(func() error {
		l, err := netlink.LinkByName("lrb")
		if err != nil {
			return err
		}
		on = l.Attrs().Xdp != nil && l.Attrs().Xdp.Attached
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return on
}

// TestRecvUntilIdleJSON checks XDP, stopped by --until-idle, and the JSON
// contract.
func TestRecvUntilIdleJSON(t *testing.T) {
	p := nstest.NewPair(t, 1)
	wait := recvIn(t, t.Context(), p, "--method", "xdp", "--until-idle", "300ms", "--json", "--window", "4096")
	if !xdpOn(t, p) {
		t.Fatal("no XDP program on lrb while recv runs")
	}
	frames := recvFrames(p)
	sendRaw(t, p, frames)
	code, out, errOut := wait()
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if xdpOn(t, p) {
		t.Error("XDP program still attached after recv exited")
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &raw); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	keys := slices.Sorted(maps.Keys(raw))
	if want := []string{"link", "method", "method_reason", "other_packets", "packets", "ring_drops", "streams", "window", "xdp_mode"}; !slices.Equal(keys, want) {
		t.Errorf("report keys %v, want %v", keys, want)
	}
	var rep struct {
		Method  string                       `json:"method"`
		XDPMode string                       `json:"xdp_mode"`
		Packets uint64                       `json:"packets"`
		Streams []map[string]json.RawMessage `json:"streams"`
		Link    map[string]uint64            `json:"link"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	// veth runs XDP in its driver: native.
	if rep.Method != "xdp" || rep.XDPMode != "native" || rep.Packets != uint64(len(frames)) || len(rep.Streams) != 1 {
		t.Fatalf("report %s", out)
	}
	s := rep.Streams[0]
	// late, none here, is absent when 0 (as in a run's stream_detail).
	if keys := slices.Sorted(maps.Keys(s)); !slices.Equal(keys, []string{"dst", "dst_port", "duplicates", "first_arrival_ns", "latency", "max_seq", "missing", "missing_ranges", "queues", "received", "reordered", "src"}) {
		t.Errorf("stream keys %v", keys)
	}
	// Every packet timed, on the clock recv states by default: nothing
	// relates the sender's to this host's (here they are one).
	var lat struct {
		Samples  uint64  `json:"samples"`
		MinUs    float64 `json:"min_us"`
		Negative uint64  `json:"negative"`
		Absurd   uint64  `json:"absurd"`
		Clock    string  `json:"clock"`
	}
	if err := json.Unmarshal(s["latency"], &lat); err != nil || lat.Samples != 191 || lat.Negative != 0 || lat.Absurd != 0 || lat.Clock != "unsynchronised" {
		t.Errorf("stream latency %s (%v): want 191 samples, none negative or absurd, on the unsynchronised clock", s["latency"], err)
	}
	for k, want := range map[string]string{"src": `"198.18.0.1"`, "dst": `"198.18.0.2"`, "dst_port": "9", "received": "191", "max_seq": "200",
		"duplicates": "1", "reordered": "0", "missing": "10", "missing_ranges": "[[50,59]]"} {
		var c bytes.Buffer
		if err := json.Compact(&c, s[k]); err != nil || c.String() != want {
			got := c.String()
			t.Errorf("stream %s = %s, want %s", k, got, want)
		}
	}
	if keys := slices.Sorted(maps.Keys(rep.Link)); !slices.Equal(keys, []string{"rx_dropped", "rx_fifo", "rx_missed", "rx_packets", "xdp_drops", "xdp_packets"}) {
		t.Errorf("link keys %v", keys)
	}
	if rep.Link["xdp_packets"] != uint64(len(frames)) || rep.Link["xdp_drops"] != uint64(len(frames)) {
		t.Errorf("link %v: want xdp_packets = xdp_drops = %d", rep.Link, len(frames))
	}
}

// TestRecvInterruptTable checks AF_PACKET, stopped by the context (SIGINT
// in main), and the table output.
func TestRecvInterruptTable(t *testing.T) {
	p := nstest.NewPair(t, 1)
	ctx, cancel := context.WithCancel(t.Context())
	wait := recvIn(t, ctx, p, "--method", "afpacket")
	sendRaw(t, p, recvFrames(p))
	time.Sleep(100 * time.Millisecond)
	cancel()
	code, out, errOut := wait()
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"method   afpacket", "packets  191: 191 test, 0 other", "latency  one-way, µs, on the unsynchronised clock",
		"198.18.0.1  198.18.0.2  9     191       200      10       1", "50-59", "ring     drops 0"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}
