//go:build linux

package receiver

import (
	"bytes"
	"encoding/binary"
	"errors"
	"net/netip"
	"testing"

	"github.com/cilium/ebpf"
)

// reflectSport is the UDP source port the reflection tests' frames
// carry (testFrame's is 9, the destination's default too).
const reflectSport = 40000

// l3Offset is where frame f's IP header starts (after its VLAN tags).
func l3Offset(f testFrame) int { return 14 + 4*f.vlans }

// withUDPChecksum sets frame b's UDP source port to reflectSport and a
// valid UDP checksum (testFrame writes 0: none), so that the reflection
// is shown to keep it valid.
func withUDPChecksum(t *testing.T, f testFrame, b []byte) []byte {
	t.Helper()
	l3 := l3Offset(f)
	udp := udpOffset(b, l3)
	binary.BigEndian.PutUint16(b[udp:], reflectSport)
	binary.BigEndian.PutUint16(b[udp+6:], 0)
	binary.BigEndian.PutUint16(b[udp+6:], ^udpSum(b, l3))
	return b
}

// udpOffset is the UDP header's offset in b, whose IP header is at l3.
func udpOffset(b []byte, l3 int) int {
	if b[l3]>>4 == 6 {
		return l3 + 40
	}
	return l3 + int(b[l3]&0x0f)*4
}

// fold is the ones' complement sum of b's 16-bit words added to sum.
func fold(sum uint32, b []byte) uint32 {
	for i := 0; i+1 < len(b); i += 2 {
		sum += uint32(binary.BigEndian.Uint16(b[i:]))
	}
	if len(b)%2 == 1 {
		sum += uint32(b[len(b)-1]) << 8
	}
	for sum > 0xffff {
		sum = sum&0xffff + sum>>16
	}
	return sum
}

// udpSum is the ones' complement sum of b's UDP datagram and its
// pseudo-header (IP header at l3): 0xffff when its checksum is valid.
func udpSum(b []byte, l3 int) uint16 {
	udp := udpOffset(b, l3)
	n := int(binary.BigEndian.Uint16(b[udp+4:]))
	var sum uint32
	if b[l3]>>4 == 6 {
		sum = fold(sum, b[l3+8:l3+40])
	} else {
		sum = fold(sum, b[l3+12:l3+20])
	}
	sum += protoUDP + uint32(n)
	return uint16(fold(sum, b[udp:udp+n]))
}

// TestXDPReflect runs frames through the receiver's XDP program in the
// kernel (BPF_PROG_TEST_RUN): a test packet to a reflected port is
// counted like any other, then sent back (XDP_TX) with its Ethernet
// addresses, IP addresses and UDP ports swapped, its IPv4 header and UDP
// checksums still valid and every other byte as it was; it is counted in
// its stream's Reflected. A packet to another port is counted and
// dropped untouched.
func TestXDPReflect(t *testing.T) {
	skipUnlessRoot(t)
	const port = 10100
	v6a, v6b := netip.MustParseAddr("2001:2::1"), netip.MustParseAddr("2001:2::2")
	x, err := loadXDP(mustOptions(t, Options{Window: MinWindow, Reflect: []uint16{port, 10200}}))
	if err != nil {
		t.Fatal(err)
	}
	defer x.close()
	frames := []testFrame{
		{port: port, seq: 1},
		{port: port, seq: 2, ihl: 15},
		{port: port, seq: 3, vlans: 1},
		{port: port, seq: 4, vlans: 2, size: 200},
		{port: port, seq: 1, src: v6a, dst: v6b},
		{port: port, seq: 2, src: v6a, dst: v6b, vlans: 1},
	}
	for i, f := range frames {
		in := withUDPChecksum(t, f, f.bytes())
		out := make([]byte, len(in))
		ret, err := x.prog.Run(&ebpf.RunOptions{Data: in, DataOut: out})
		if err != nil {
			t.Fatal(err)
		}
		if ret != xdpTx {
			t.Fatalf("frame %d (%+v): verdict %d, want XDP_TX (%d)", i, f, ret, xdpTx)
		}
		want, l3, udp := reflected(f, in)
		if !bytes.Equal(out, want) {
			t.Errorf("frame %d (%+v):\n got %x\nwant %x", i, f, out, want)
		}
		if !f.src.Is6() {
			if s := fold(0, out[l3:l3+int(out[l3]&0x0f)*4]); s != 0xffff {
				t.Errorf("frame %d: IPv4 header checksum invalid after reflection (sum %#x)", i, s)
			}
		}
		if s := udpSum(out, l3); s != 0xffff {
			t.Errorf("frame %d: UDP checksum invalid after reflection (sum %#x)", i, s)
		}
		if binary.BigEndian.Uint16(out[udp:]) != port || binary.BigEndian.Uint16(out[udp+2:]) != reflectSport {
			t.Errorf("frame %d: ports %d -> %d, want %d -> %d", i, binary.BigEndian.Uint16(out[udp:]), binary.BigEndian.Uint16(out[udp+2:]), port, reflectSport)
		}
	}
	// Another port: counted, dropped, not reflected.
	other := testFrame{port: 9, seq: 1}.bytes()
	if ret, err := x.prog.Run(&ebpf.RunOptions{Data: other}); err != nil || ret != xdpDrop {
		t.Fatalf("a frame to an unreflected port: verdict %d, %v; want XDP_DROP (%d)", ret, err, xdpDrop)
	}
	c, err := x.read(true)
	if err != nil {
		t.Fatal(err)
	}
	got := map[netip.Addr]map[uint16][2]uint64{}
	for _, s := range c.streams {
		if got[s.Src] == nil {
			got[s.Src] = map[uint16][2]uint64{}
		}
		got[s.Src][s.DstPort] = [2]uint64{s.Received, s.Reflected}
	}
	want := map[netip.Addr]map[uint16][2]uint64{addrA: {port: {4, 4}, 9: {1, 0}}, v6a: {port: {2, 2}}}
	for src, ports := range want {
		for p, w := range ports {
			if got[src][p] != w {
				t.Errorf("stream %v:%d: received, reflected = %v; want %v", src, p, got[src][p], w)
			}
		}
	}
	if len(c.streams) != 3 {
		t.Errorf("%d streams, want 3: %+v", len(c.streams), c.streams)
	}
}

// swapBytes exchanges a and b, of one length.
func swapBytes(a, b []byte) {
	t := bytes.Clone(a)
	copy(a, b)
	copy(b, t)
}

// TestReflectNeedsXDP: reflection is refused with the AF_PACKET method
// (it cannot send frames back), with one error naming the method and
// what is valid; port 0 and too many ports are refused too.
func TestReflectNeedsXDP(t *testing.T) {
	for _, tt := range []struct {
		o    Options
		want string
	}{
		{Options{Method: MethodAFPacket, Reflect: []uint16{9}, Names: Names{Method: "--method", Reflect: "--latency rtt"}},
			"invalid receiver options: --latency rtt with --method afpacket: only the xdp method can reflect (XDP_TX); give --method xdp or auto"},
		{Options{Reflect: []uint16{0}}, "invalid receiver options: Reflect: port 0: want UDP ports 1 to 65535"},
		{Options{Reflect: make([]uint16, MaxReflectPorts+1)}, "invalid receiver options: Reflect: 1025 ports, want at most 1024"},
	} {
		_, err := tt.o.WithDefaults()
		if err == nil || err.Error() != tt.want || !errors.Is(err, ErrOptions) {
			t.Errorf("%+v: %v, want %q", tt.o, err, tt.want)
		}
	}
}

// TestXDPReflectVLAN runs frames through the program loaded with a
// ReflectVLAN (BPF_PROG_TEST_RUN): an untagged reflection (IPv4 and
// IPv6) goes back 4 bytes longer, its Ethernet addresses swapped and
// then the run's tag, 0x8100 and the id (1, 100, 4094), then the frame as TestXDPReflect
// wants it from the EtherType on; a tagged one is reflected as it is,
// no second tag.
func TestXDPReflectVLAN(t *testing.T) {
	skipUnlessRoot(t)
	const port = 10100
	v6a, v6b := netip.MustParseAddr("2001:2::1"), netip.MustParseAddr("2001:2::2")
	// The id's edges and one between: 1 and 4094 show a swapped or
	// masked byte that 100 alone might not.
	for _, vlan := range []uint16{1, 100, 4094} {
		x, err := loadXDP(mustOptions(t, Options{Window: MinWindow, Reflect: []uint16{port}, ReflectVLAN: int(vlan)}))
		if err != nil {
			t.Fatal(err)
		}
		for i, f := range []testFrame{
			{port: port, seq: 1},
			{port: port, seq: 2, src: v6a, dst: v6b},
			{port: port, seq: 3, vlans: 1},
		} {
			in := withUDPChecksum(t, f, f.bytes())
			out := make([]byte, len(in)+4)
			ret, err := x.prog.Run(&ebpf.RunOptions{Data: in, DataOut: out})
			if err != nil {
				x.close()
				t.Fatal(err)
			}
			if ret != xdpTx {
				t.Errorf("vlan %d frame %d (%+v): verdict %d, want XDP_TX (%d)", vlan, i, f, ret, xdpTx)
				continue
			}
			want, _, _ := reflected(f, in)
			if f.vlans == 0 {
				want = append(append(want[:12:12], 0x81, 0x00, byte(vlan>>8), byte(vlan)), want[12:]...)
			}
			if got := out[:min(len(out), len(want))]; len(out) < len(want) || !bytes.Equal(got, want) {
				t.Errorf("vlan %d frame %d (%+v):\n got %x\nwant %x", vlan, i, f, out, want)
			}
		}
		x.close()
	}
}

// reflected is frame f's bytes in as its reflection must be: the
// Ethernet addresses, IP addresses and UDP ports swapped, nothing else
// changed; l3 and udp are its IP and UDP headers' offsets.
func reflected(f testFrame, in []byte) (want []byte, l3, udp int) {
	want = bytes.Clone(in)
	swapBytes(want[0:6], want[6:12])
	l3 = l3Offset(f)
	if f.src.Is6() {
		swapBytes(want[l3+8:l3+24], want[l3+24:l3+40])
	} else {
		swapBytes(want[l3+12:l3+16], want[l3+16:l3+20])
	}
	udp = udpOffset(want, l3)
	swapBytes(want[udp:udp+2], want[udp+2:udp+4])
	return want, l3, udp
}
