//go:build linux && traffic

package netns_test

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/linerate/linerate/internal/netns/nstest"
	"github.com/vishvananda/netlink"
)

func TestPairPings(t *testing.T) {
	p := nstest.NewPair(t, 2)
	var conn *net.UDPConn
	if err := p.B.NS.Do(func() error {
		var err error
		conn, err = net.ListenUDP("udp4", &net.UDPAddr{IP: net.ParseIP("198.18.0.2"), Port: 9000})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := p.A.NS.Do(func() error {
		c, err := net.Dial("udp4", "198.18.0.2:9000")
		if err != nil {
			return err
		}
		defer c.Close()
		_, err = c.Write([]byte("hello"))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	conn.SetReadDeadline(time.Now().Add(2 * time.Second))
	buf := make([]byte, 16)
	n, from, err := conn.ReadFromUDP(buf)
	if err != nil || string(buf[:n]) != "hello" || from.IP.String() != "198.18.0.1" {
		t.Fatalf("datagram across the pair: %q from %v: %v", buf[:n], from, err)
	}
	out, err := p.A.NS.Command(context.Background(), "ip", "-br", "addr", "show", "lra").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "198.18.0.1/24") {
		t.Errorf("ip netns exec: %v %s", err, out)
	}
	// /sys shows the namespace that mounted it, not the thread's: ask netlink.
	var rxq int
	if err := p.B.NS.Do(func() error {
		l, err := netlink.LinkByName("lrb")
		if err == nil {
			rxq = l.Attrs().NumRxQueues
		}
		return err
	}); err != nil || rxq != 2 {
		t.Errorf("lrb rx queues %d: %v", rxq, err)
	}
}
