package pktgen

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Magic is pktgen's PKTGEN_MAGIC, the first word of its payload header.
const Magic uint32 = 0xbe9be955

// HeaderLen is the size of the pktgen header (struct pktgen_hdr).
const HeaderLen = 16

// ErrNoHeader is returned when the bytes do not start with a pktgen header.
var ErrNoHeader = errors.New("no pktgen header")

// Header is struct pktgen_hdr: four big-endian 32-bit words at UDP payload
// offset 0. TvSec and TvUsec are CLOCK_REALTIME at build time (zero with
// NO_TIMESTAMP); TvSec holds the low 32 bits of the seconds.
type Header struct {
	Seq    uint32
	TvSec  uint32
	TvUsec uint32
}

// Encode writes the header, magic first, into b (len(b) >= HeaderLen).
func (h Header) Encode(b []byte) {
	_ = b[HeaderLen-1]
	binary.BigEndian.PutUint32(b[0:], Magic)
	binary.BigEndian.PutUint32(b[4:], h.Seq)
	binary.BigEndian.PutUint32(b[8:], h.TvSec)
	binary.BigEndian.PutUint32(b[12:], h.TvUsec)
}

// DecodeHeader reads a header from the start of a UDP payload.
func DecodeHeader(b []byte) (Header, error) {
	if len(b) < HeaderLen {
		return Header{}, fmt.Errorf("decode pktgen header: %d bytes, need %d: %w", len(b), HeaderLen, ErrNoHeader)
	}
	if m := binary.BigEndian.Uint32(b); m != Magic {
		return Header{}, fmt.Errorf("decode pktgen header: magic %#08x, want %#08x: %w", m, Magic, ErrNoHeader)
	}
	return Header{
		Seq:    binary.BigEndian.Uint32(b[4:]),
		TvSec:  binary.BigEndian.Uint32(b[8:]),
		TvUsec: binary.BigEndian.Uint32(b[12:]),
	}, nil
}

// HeaderOffset is where the pktgen header starts in a frame: after the
// Ethernet header, vlanTags 802.1Q tags, mplsLabels MPLS labels, the IPv4
// (20 bytes, no options) or IPv6 (40 bytes) header and the UDP header: 42
// for plain IPv4, 62 for IPv6.
func HeaderOffset(ipv6 bool, vlanTags, mplsLabels int) int {
	off := 14 + 4*vlanTags + 4*mplsLabels + 20 + 8
	if ipv6 {
		off += 20
	}
	return off
}

// MinFrame is the smallest frame without FCS that carries the pktgen
// header: the headers before it (HeaderOffset, with one 802.1Q tag when
// vlan) and the header itself. Config.Validate and BuildFrame refuse a
// smaller pkt_size; a frame of 0 bytes is built at this size.
func MinFrame(ipv6, vlan bool) int {
	tags := 0
	if vlan {
		tags = 1
	}
	return HeaderOffset(ipv6, tags, 0) + HeaderLen
}

// SeqAfter reports whether sequence a comes after b in serial-number
// arithmetic (RFC 1982), so that a stream survives the u32 wrap.
func SeqAfter(a, b uint32) bool { return int32(a-b) > 0 }
