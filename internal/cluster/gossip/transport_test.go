package gossip

import (
	"net"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The transport binds TCP and UDP on one port, hands each packet on as
// its own copy (the read buffer is reused), carries streams, and shuts
// down with a packet nobody read.
func TestTransport(t *testing.T) {
	tr, err := newTransport("127.0.0.1", 0, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(tr.Port()))
	ip, port, err := tr.FinalAdvertiseAddr("", 0)
	if err != nil || !ip.Equal(net.IPv4(127, 0, 0, 1)) || port != tr.Port() {
		t.Fatalf("FinalAdvertiseAddr = %v %d %v, want 127.0.0.1 %d", ip, port, err, tr.Port())
	}
	if _, err := tr.WriteTo([]byte("first"), addr); err != nil {
		t.Fatal(err)
	}
	p1 := <-tr.PacketCh()
	if _, err := tr.WriteTo([]byte("2nd"), addr); err != nil {
		t.Fatal(err)
	}
	p2 := <-tr.PacketCh()
	if string(p1.Buf) != "first" || string(p2.Buf) != "2nd" || p1.From.String() != addr {
		t.Errorf("packets %q from %s, %q: want \"first\" from %s, \"2nd\"", p1.Buf, p1.From, p2.Buf, addr)
	}
	c, err := tr.DialTimeout(addr, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	select {
	case s := <-tr.StreamCh():
		_ = s.Close()
	case <-time.After(5 * time.Second):
		t.Fatal("no stream accepted")
	}
	if _, err := tr.WriteTo([]byte("unread"), addr); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond) // the read loop now waits to hand it on
	done := make(chan error)
	go func() { done <- tr.Shutdown() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("shutdown: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("shutdown hung on a packet nobody read")
	}
}

// A port taken for TCP is refused, naming the address.
func TestTransportPortTaken(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	if tr, err := newTransport("127.0.0.1", port, t.Logf); err == nil || !strings.Contains(err.Error(), l.Addr().String()) {
		if tr != nil {
			_ = tr.Shutdown()
		}
		t.Fatalf("newTransport on a taken port: %v, want an error naming %s", err, l.Addr())
	}
}
