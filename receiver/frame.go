package receiver

import (
	"encoding/binary"
	"net/netip"

	"github.com/linerate/linerate/pktgen"
)

// streamKey identifies a stream: source and destination address as 16
// bytes each (IPv4 as ::ffff:a.b.c.d, read big-endian into two words) and
// the UDP destination port. Comparable and cheap to compare: no strings.
type streamKey struct {
	src0, src1 uint64
	dst0, dst1 uint64
	port       uint16
}

// v4Mapped is the high half of the low word of ::ffff:a.b.c.d.
const v4Mapped = 0xffff << 32

func (k streamKey) addrs() (src, dst netip.Addr) {
	var b [16]byte
	binary.BigEndian.PutUint64(b[0:], k.src0)
	binary.BigEndian.PutUint64(b[8:], k.src1)
	src = netip.AddrFrom16(b).Unmap()
	binary.BigEndian.PutUint64(b[0:], k.dst0)
	binary.BigEndian.PutUint64(b[8:], k.dst1)
	dst = netip.AddrFrom16(b).Unmap()
	return src, dst
}

// eq compares field by field: the compiler's struct equality calls out
// of line (the struct has padding), which costs more than the rest of
// the hot path.
func (k *streamKey) eq(o *streamKey) bool {
	return k.src1 == o.src1 && k.dst1 == o.dst1 && k.port == o.port && k.src0 == o.src0 && k.dst0 == o.dst0
}

// hash spreads a key over a power-of-two table (Fibonacci hashing).
func (k *streamKey) hash() uint64 {
	h := k.src1*0x9e3779b97f4a7c15 ^ k.dst1 ^ k.src0<<1 ^ k.dst0<<2 ^ uint64(k.port)<<48
	return (h ^ h>>29) * 0xbf58476d1ce4e5b9
}

// EtherType values the parser follows.
const (
	etherIPv4  = 0x0800
	etherIPv6  = 0x86dd
	etherVLAN  = 0x8100 // 802.1Q
	etherQinQ  = 0x88a8 // 802.1ad
	maxVLANs   = 2
	protoUDP   = 17
	ipv4MinHdr = 20
	ipv6Hdr    = 40
	udpHdr     = 8
)

// parseFrame decodes an Ethernet frame (up to two 802.1Q/802.1ad tags,
// IPv4 with any header length or IPv6 with UDP as the next header, UDP)
// and, when the UDP payload starts with the pktgen magic and holds the
// whole 16-byte header, fills k and returns the sequence number, the
// send time (sentUs: the header's tv_sec and tv_usec in Unix
// microseconds) and true. Anything else — ARP, IPv6 ND, IPv4 fragments
// after the first, IPv6 extension headers, UDP without the magic,
// truncated frames — returns false. It never allocates.
func parseFrame(b []byte, k *streamKey) (seq uint32, sentUs uint64, ok bool) {
	return parseAny(b, k)
}

// sentUs is the send time of a pktgen header h (at least 16 bytes) in
// Unix microseconds.
func sentUs(h []byte) uint64 {
	return uint64(binary.BigEndian.Uint32(h[8:]))*1e6 + uint64(binary.BigEndian.Uint32(h[12:]))
}

// parseAny is parseFrame's general case: VLAN tags, IPv4 options, IPv6.
func parseAny(b []byte, k *streamKey) (seq uint32, sent uint64, ok bool) {
	if len(b) < 14 {
		return 0, 0, false
	}
	off := 12
	et := binary.BigEndian.Uint16(b[off:])
	off += 2
	for i := 0; i < maxVLANs && (et == etherVLAN || et == etherQinQ); i++ {
		if len(b) < off+4 {
			return 0, 0, false
		}
		et = binary.BigEndian.Uint16(b[off+2:])
		off += 4
	}
	switch et {
	case etherIPv4:
		if len(b) < off+ipv4MinHdr {
			return 0, 0, false
		}
		ip := b[off : off+ipv4MinHdr]
		ihl := int(ip[0]&0x0f) * 4
		if ip[0]>>4 != 4 || ihl < ipv4MinHdr || ip[9] != protoUDP || binary.BigEndian.Uint16(ip[6:])&0x1fff != 0 {
			return 0, 0, false
		}
		k.src0, k.src1 = 0, v4Mapped|uint64(binary.BigEndian.Uint32(ip[12:]))
		k.dst0, k.dst1 = 0, v4Mapped|uint64(binary.BigEndian.Uint32(ip[16:]))
		off += ihl
	case etherIPv6:
		if len(b) < off+ipv6Hdr {
			return 0, 0, false
		}
		ip := b[off : off+ipv6Hdr]
		if ip[0]>>4 != 6 || ip[6] != protoUDP {
			return 0, 0, false
		}
		k.src0, k.src1 = binary.BigEndian.Uint64(ip[8:]), binary.BigEndian.Uint64(ip[16:])
		k.dst0, k.dst1 = binary.BigEndian.Uint64(ip[24:]), binary.BigEndian.Uint64(ip[32:])
		off += ipv6Hdr
	default:
		return 0, 0, false
	}
	if len(b) < off+udpHdr+pktgen.HeaderLen {
		return 0, 0, false
	}
	u := b[off : off+udpHdr+pktgen.HeaderLen]
	if binary.BigEndian.Uint32(u[udpHdr:]) != pktgen.Magic {
		return 0, 0, false
	}
	k.port = binary.BigEndian.Uint16(u[2:])
	return binary.BigEndian.Uint32(u[udpHdr+4:]), sentUs(u[udpHdr:]), true
}
