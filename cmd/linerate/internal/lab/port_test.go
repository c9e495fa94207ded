//go:build linux && traffic

package lab

import (
	"net"
	"net/netip"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/linerate/linerate/internal/netns"
	"github.com/linerate/linerate/internal/netns/nstest"
	"github.com/linerate/linerate/pktgen"
)

// rawSend sends n test frames (seq 1..n) and extra non-test frames from
// link l with an AF_PACKET socket opened in its namespace.
func rawSend(t *testing.T, l *netns.Link, dstMAC net.HardwareAddr, n int, vlan, v6 bool) {
	t.Helper()
	cfg := pktgen.Config{PktSize: 60, DstMin: netip.MustParseAddr("198.18.0.2"), SrcMin: netip.MustParseAddr("198.18.0.1"), DstMAC: dstMAC}
	if v6 {
		cfg.DstMin, cfg.SrcMin, cfg.PktSize = netip.MustParseAddr("2001:2::2"), netip.MustParseAddr("2001:2::1"), 80
	}
	if vlan {
		cfg.HasVLAN, cfg.VLANID, cfg.PktSize = true, 7, cfg.PktSize+4
	}
	f, err := pktgen.BuildFrame(&cfg, 0, l.MAC)
	if err != nil {
		t.Fatal(err)
	}
	err = l.NS.Do(func() error {
		fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW, 0)
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		sa := &unix.SockaddrLinklayer{Ifindex: l.Index, Halen: 6}
		copy(sa.Addr[:], dstMAC)
		buf := append([]byte(nil), f.Bytes...)
		for seq := 1; seq <= n; seq++ {
			f.Stamp(buf, uint32(seq), time.Now())
			if err := unix.Sendto(fd, buf, 0, sa); err != nil {
				return err
			}
		}
		other := append([]byte(nil), f.Bytes...)
		other[f.HdrOff] = 0 // no magic: not a test packet
		return unix.Sendto(fd, other, 0, sa)
	})
	if err != nil {
		t.Fatalf("send raw frames: %v", err)
	}
}

func TestPortDropsEveryKth(t *testing.T) {
	for _, tt := range []struct {
		name     string
		vlan, v6 bool
	}{{"ipv4", false, false}, {"ipv4-vlan", true, false}, {"ipv6", false, true}, {"ipv6-vlan", true, true}} {
		t.Run(tt.name, func(t *testing.T) {
			p := nstest.NewPair(t, 1)
			port, err := AttachPort(p.B.NS, "lrb", Loss{Every: 7})
			if err != nil {
				t.Fatal(err)
			}
			defer port.Close()
			if port.Mode != "native" {
				t.Errorf("veth should take the program natively, got %s", port.Mode)
			}
			rawSend(t, p.A, p.B.MAC, 100, tt.vlan, tt.v6)
			var st PortStats
			for i := 0; i < 100; i++ {
				if st, err = port.Stats(); err == nil && st.Frames >= 101 {
					break
				}
				time.Sleep(10 * time.Millisecond)
			}
			if st.Test != 100 || st.Dropped != 14 || st.Frames < 101 {
				t.Fatalf("stats %+v (%v): want 100 test packets, 14 dropped (every 7th), the non-test frame passed", st, err)
			}
			if wantTagged := map[bool]uint64{true: 100}[tt.vlan]; st.Tagged != wantTagged {
				t.Errorf("stats %+v: %d tagged test packets, want %d", st, st.Tagged, wantTagged)
			}
		})
	}
}

func TestPortRandomLossAndDetach(t *testing.T) {
	p := nstest.NewPair(t, 1)
	port, err := AttachPort(p.B.NS, "lrb", Loss{BasisPoints: 5000})
	if err != nil {
		t.Fatal(err)
	}
	rawSend(t, p.A, p.B.MAC, 400, false, false)
	time.Sleep(50 * time.Millisecond)
	st, err := port.Stats()
	if err != nil || st.Test != 400 || st.Dropped < 120 || st.Dropped > 280 {
		t.Fatalf("50%% random loss: %+v %v", st, err)
	}
	if err := port.Close(); err != nil {
		t.Fatal(err)
	}
	// Detached: a second program can attach natively again.
	again, err := AttachPort(p.B.NS, "lrb", Loss{})
	if err != nil {
		t.Fatalf("re-attach after close: %v", err)
	}
	again.Close()
	if _, err := AttachPort(p.B.NS, "lrb", Loss{Every: 1}); err == nil {
		t.Error("loss every 1 (drop all) accepted")
	}
}
