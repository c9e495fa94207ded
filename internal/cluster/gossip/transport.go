package gossip

import (
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	sockaddr "github.com/hashicorp/go-sockaddr"
	"github.com/hashicorp/memberlist"
)

// udpRecvBuf is the socket receive buffer a member asks for: a fleet
// joining at once sends bursts a default buffer drops.
const udpRecvBuf = 2 << 20

// maxPacket is the largest gossip packet read (memberlist's own bound).
const maxPacket = 65536

// transport is memberlist's network transport over one UDP socket and
// one TCP listener on the same port, as memberlist's NetTransport, except
// that a packet is read into one reused buffer and handed on as a copy of
// its length: NetTransport allocates a fresh 64 KiB buffer for every
// packet it reads, which with many members per process (the scale test's
// hosts) was most of their garbage and a good part of their CPU.
type transport struct {
	tcp     *net.TCPListener
	udp     *net.UDPConn
	packets chan *memberlist.Packet
	streams chan net.Conn
	wg      sync.WaitGroup
	closed  atomic.Bool
	done    chan struct{} // closed at Shutdown: nobody may be reading the channels
	log     func(format string, args ...any)
}

// newTransport binds host:port for TCP and UDP (port 0: a port free for
// both, the kernel's choice).
func newTransport(host string, port int, log func(string, ...any)) (*transport, error) {
	ip := net.ParseIP(host)
	if ip == nil {
		return nil, fmt.Errorf("bind address %q: not an IP address", host)
	}
	var errs []error
	for range 10 { // port 0: the TCP port may be taken for UDP; try another
		t, err := listen(ip, port)
		if err == nil {
			t.log = log
			t.wg.Add(2)
			go t.acceptLoop()
			go t.readLoop()
			return t, nil
		}
		errs = append(errs, err)
		if port != 0 {
			break
		}
	}
	return nil, errors.Join(errs...)
}

func listen(ip net.IP, port int) (*transport, error) {
	tcp, err := net.ListenTCP("tcp", &net.TCPAddr{IP: ip, Port: port})
	if err != nil {
		return nil, fmt.Errorf("gossip TCP listener on %s: %w", net.JoinHostPort(ip.String(), fmt.Sprint(port)), err)
	}
	bound := tcp.Addr().(*net.TCPAddr).Port
	udp, err := net.ListenUDP("udp", &net.UDPAddr{IP: ip, Port: bound})
	if err != nil {
		_ = tcp.Close()
		return nil, fmt.Errorf("gossip UDP socket on %s: %w", net.JoinHostPort(ip.String(), fmt.Sprint(bound)), err)
	}
	for size := udpRecvBuf; size > 0; size /= 2 {
		if udp.SetReadBuffer(size) == nil {
			break
		}
	}
	return &transport{tcp: tcp, udp: udp, packets: make(chan *memberlist.Packet), streams: make(chan net.Conn), done: make(chan struct{})}, nil
}

// Port is the port bound (TCP and UDP).
func (t *transport) Port() int { return t.tcp.Addr().(*net.TCPAddr).Port }

// FinalAdvertiseAddr is ip:port when given, else the bound address (a
// private address of the host when bound to every address).
func (t *transport) FinalAdvertiseAddr(ip string, port int) (net.IP, int, error) {
	if ip != "" {
		addr := net.ParseIP(ip)
		if addr == nil {
			return nil, 0, fmt.Errorf("advertise address %q: not an IP address", ip)
		}
		if a4 := addr.To4(); a4 != nil {
			addr = a4
		}
		return addr, port, nil
	}
	addr := t.tcp.Addr().(*net.TCPAddr).IP
	if addr.IsUnspecified() {
		priv, err := sockaddr.GetPrivateIP()
		if err != nil {
			return nil, 0, fmt.Errorf("no address to advertise: %w", err)
		}
		if priv == "" {
			return nil, 0, errors.New("no address to advertise: no private address on this host (give an advertise address)")
		}
		addr = net.ParseIP(priv)
	}
	if a4 := addr.To4(); a4 != nil {
		addr = a4
	}
	return addr, t.Port(), nil
}

func (t *transport) WriteTo(b []byte, addr string) (time.Time, error) {
	ua, err := net.ResolveUDPAddr("udp", addr)
	if err != nil {
		return time.Time{}, err
	}
	_, err = t.udp.WriteTo(b, ua)
	return time.Now(), err
}

func (t *transport) PacketCh() <-chan *memberlist.Packet { return t.packets }

func (t *transport) DialTimeout(addr string, timeout time.Duration) (net.Conn, error) {
	return net.DialTimeout("tcp", addr, timeout)
}

func (t *transport) StreamCh() <-chan net.Conn { return t.streams }

func (t *transport) Shutdown() error {
	if t.closed.Swap(true) {
		return nil
	}
	close(t.done)
	err := errors.Join(t.tcp.Close(), t.udp.Close())
	t.wg.Wait()
	return err
}

func (t *transport) acceptLoop() {
	defer t.wg.Done()
	delay := 5 * time.Millisecond
	for {
		c, err := t.tcp.AcceptTCP()
		if err != nil {
			if t.closed.Load() {
				return
			}
			t.log("[ERR] memberlist: accepting a stream: %v", err)
			time.Sleep(delay) // a full file table: back off, as NetTransport does
			delay = min(2*delay, time.Second)
			continue
		}
		delay = 5 * time.Millisecond
		select {
		case t.streams <- c:
		case <-t.done:
			_ = c.Close()
			return
		}
	}
}

func (t *transport) readLoop() {
	defer t.wg.Done()
	buf := make([]byte, maxPacket)
	for {
		n, from, err := t.udp.ReadFrom(buf)
		ts := time.Now()
		if err != nil {
			if t.closed.Load() {
				return
			}
			t.log("[ERR] memberlist: reading a packet: %v", err)
			continue
		}
		if n < 1 {
			continue
		}
		select {
		case t.packets <- &memberlist.Packet{Buf: append([]byte(nil), buf[:n]...), From: from, Timestamp: ts}:
		case <-t.done:
			return
		}
	}
}
