package receiver

import (
	"encoding/binary"
	"net/netip"
	"testing"

	"github.com/linerate/linerate/pktgen"
)

// testFrame describes a frame for tests; bytes builds it.
type testFrame struct {
	src, dst netip.Addr // default 198.18.0.1 -> 198.18.0.2
	port     uint16     // UDP destination port (default 9)
	seq      uint32
	vlans    int    // 802.1Q tags (the second one 802.1ad)
	ihl      int    // IPv4 header length in words (default 5)
	noMagic  bool   // UDP without the pktgen header
	arp      bool   // an ARP request instead
	size     int    // frame length without FCS (default: minimum, at least 60)
	sentUs   uint64 // the header's send time, Unix µs (default 0: none)
}

var (
	addrA = netip.MustParseAddr("198.18.0.1")
	addrB = netip.MustParseAddr("198.18.0.2")
)

func (f testFrame) bytes() []byte {
	src, dst := f.src, f.dst
	if !src.IsValid() {
		src = addrA
	}
	if !dst.IsValid() {
		dst = addrB
	}
	port := f.port
	if port == 0 {
		port = 9
	}
	ihl := f.ihl
	if ihl == 0 {
		ihl = 5
	}
	b := make([]byte, 0, 128)
	b = append(b, 0x02, 0, 0, 0, 0, 2, 0x02, 0, 0, 0, 0, 1) // dst, src MAC
	for i := 0; i < f.vlans; i++ {
		tpid := uint16(etherVLAN)
		if i == 0 && f.vlans > 1 {
			tpid = etherQinQ
		}
		b = binary.BigEndian.AppendUint16(b, tpid)
		b = binary.BigEndian.AppendUint16(b, uint16(100+i))
	}
	if f.arp {
		b = binary.BigEndian.AppendUint16(b, 0x0806)
		b = append(b, 0, 1, 8, 0, 6, 4, 0, 1)
		b = append(b, make([]byte, 20)...)
		return pad(b, f.size)
	}
	payload := make([]byte, pktgen.HeaderLen)
	if !f.noMagic {
		pktgen.Header{Seq: f.seq, TvSec: uint32(f.sentUs / 1e6), TvUsec: uint32(f.sentUs % 1e6)}.Encode(payload)
	}
	udp := make([]byte, 8, 8+len(payload))
	binary.BigEndian.PutUint16(udp[0:], 9)
	binary.BigEndian.PutUint16(udp[2:], port)
	binary.BigEndian.PutUint16(udp[4:], uint16(8+len(payload)))
	udp = append(udp, payload...)
	if src.Is6() {
		b = binary.BigEndian.AppendUint16(b, etherIPv6)
		ip := make([]byte, 40)
		ip[0] = 0x60
		binary.BigEndian.PutUint16(ip[4:], uint16(len(udp)))
		ip[6], ip[7] = protoUDP, 32
		s, d := src.As16(), dst.As16()
		copy(ip[8:], s[:])
		copy(ip[24:], d[:])
		b = append(append(b, ip...), udp...)
		return pad(b, f.size)
	}
	b = binary.BigEndian.AppendUint16(b, etherIPv4)
	ip := make([]byte, ihl*4)
	ip[0] = 0x40 | byte(ihl)
	binary.BigEndian.PutUint16(ip[2:], uint16(len(ip)+len(udp)))
	ip[8], ip[9] = 32, protoUDP
	s, d := src.As4(), dst.As4()
	copy(ip[12:], s[:])
	copy(ip[16:], d[:])
	for i := 20; i < len(ip); i++ {
		ip[i] = 1 // NOP options
	}
	var sum uint32
	for i := 0; i < len(ip); i += 2 {
		sum += uint32(binary.BigEndian.Uint16(ip[i:]))
	}
	for sum > 0xffff {
		sum = sum&0xffff + sum>>16
	}
	binary.BigEndian.PutUint16(ip[10:], ^uint16(sum))
	b = append(append(b, ip...), udp...)
	return pad(b, f.size)
}

func pad(b []byte, size int) []byte {
	size = max(size, 60)
	if len(b) < size {
		b = append(b, make([]byte, size-len(b))...)
	}
	return b
}

func TestParseFrame(t *testing.T) {
	v6a, v6b := netip.MustParseAddr("2001:2::1"), netip.MustParseAddr("2001:2::2")
	tests := []struct {
		name     string
		frame    []byte
		ok       bool
		src, dst netip.Addr
		port     uint16
		seq      uint32
	}{
		{"ipv4", testFrame{seq: 7}.bytes(), true, addrA, addrB, 9, 7},
		{"ipv4 ihl 15", testFrame{seq: 8, ihl: 15, port: 4000}.bytes(), true, addrA, addrB, 4000, 8},
		{"one vlan", testFrame{seq: 9, vlans: 1}.bytes(), true, addrA, addrB, 9, 9},
		{"qinq", testFrame{seq: 10, vlans: 2}.bytes(), true, addrA, addrB, 9, 10},
		{"three tags", testFrame{seq: 10, vlans: 3}.bytes(), false, netip.Addr{}, netip.Addr{}, 0, 0},
		{"ipv6", testFrame{seq: 11, src: v6a, dst: v6b, port: 10}.bytes(), true, v6a, v6b, 10, 11},
		{"ipv6 vlan", testFrame{seq: 12, src: v6a, dst: v6b, vlans: 1}.bytes(), true, v6a, v6b, 9, 12},
		{"max seq", testFrame{seq: 0xffffffff}.bytes(), true, addrA, addrB, 9, 0xffffffff},
		{"no magic", testFrame{noMagic: true}.bytes(), false, netip.Addr{}, netip.Addr{}, 0, 0},
		{"arp", testFrame{arp: true}.bytes(), false, netip.Addr{}, netip.Addr{}, 0, 0},
		{"truncated header", testFrame{seq: 1}.bytes()[:14+20+8+4], false, netip.Addr{}, netip.Addr{}, 0, 0},
		{"short", []byte{1, 2, 3}, false, netip.Addr{}, netip.Addr{}, 0, 0},
		{"ihl 4", func() []byte { b := testFrame{seq: 1}.bytes(); b[14] = 0x44; return b }(), false, netip.Addr{}, netip.Addr{}, 0, 0},
		{"tcp", func() []byte { b := testFrame{seq: 1}.bytes(); b[14+9] = 6; return b }(), false, netip.Addr{}, netip.Addr{}, 0, 0},
		{"later fragment", func() []byte { b := testFrame{seq: 1}.bytes(); b[14+7] = 1; return b }(), false, netip.Addr{}, netip.Addr{}, 0, 0},
		{"first fragment", func() []byte { b := testFrame{seq: 3}.bytes(); b[14+6] = 0x20; return b }(), true, addrA, addrB, 9, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var k streamKey
			seq, sent, ok := parseFrame(tt.frame, &k)
			if ok != tt.ok {
				t.Fatalf("ok = %v, want %v", ok, tt.ok)
			}
			if !ok {
				return
			}
			src, dst := k.addrs()
			if sent != 0 {
				t.Errorf("send time %d, want 0 (not stamped)", sent)
			}
			if src != tt.src || dst != tt.dst || k.port != tt.port || seq != tt.seq {
				t.Errorf("got %v -> %v :%d seq %d, want %v -> %v :%d seq %d", src, dst, k.port, seq, tt.src, tt.dst, tt.port, tt.seq)
			}
		})
	}
}

// FuzzParseFrame checks that the parser never panics or reads out of
// bounds, and that whatever it accepts re-encodes to the same key when
// rebuilt.
func FuzzParseFrame(f *testing.F) {
	f.Add(testFrame{seq: 1}.bytes())
	f.Add(testFrame{seq: 2, vlans: 2, ihl: 7}.bytes())
	f.Add(testFrame{seq: 3, src: netip.MustParseAddr("2001:2::1"), dst: netip.MustParseAddr("2001:2::2")}.bytes())
	f.Add(testFrame{arp: true}.bytes())
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		var k streamKey
		seq, sent, ok := parseFrame(b, &k)
		// Table.Add's IPv4 fast path agrees with the parser.
		tab := newTable(Options{Window: MinWindow, Repeats: 1, MaxStreams: 1})
		tab.Add(b)
		switch {
		case !ok && (tab.other != 1 || len(tab.streams) != 0):
			t.Fatalf("parser refused, table counted other %d streams %d", tab.other, len(tab.streams))
		case ok && (len(tab.streams) != 1 || !tab.streams[0].key.eq(&k) || tab.streams[0].MaxSeq != uint64(seq)):
			t.Fatalf("parser got %+v seq %d, table %d streams", k, seq, len(tab.streams))
		}
		if !ok {
			return
		}
		// The header must really be in the frame: its magic, seq and
		// send time.
		var found bool
		for i := 0; i+pktgen.HeaderLen <= len(b); i++ {
			if binary.BigEndian.Uint32(b[i:]) == pktgen.Magic && binary.BigEndian.Uint32(b[i+4:]) == seq && sentUs(b[i:]) == sent {
				found = true
				break
			}
		}
		if !found {
			t.Fatalf("accepted a frame without magic and seq %d: %x", seq, b)
		}
		src, dst := k.addrs()
		if !src.IsValid() || !dst.IsValid() || src.Is4() != dst.Is4() {
			t.Fatalf("bad addresses %v %v", src, dst)
		}
	})
}
