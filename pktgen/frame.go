package pktgen

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"time"
)

// Frame is one thread's packet as the kernel's pktgen builds it, for the
// userspace backends: the template bytes (without FCS) and where the
// fields that change per packet sit. Every backend sends the same frames:
// Ethernet (optional 802.1Q tag), IPv4 (ttl 32, no options) or IPv6 (hop
// limit 32), UDP, and the 16-byte pktgen header at payload offset 0, the
// rest of the payload zero.
type Frame struct {
	Bytes     []byte
	IPv6      bool
	L3Off     int // IP header
	UDPOff    int // UDP header
	HdrOff    int // pktgen header (magic, seq, tv_sec, tv_usec)
	Timestamp bool
	UDPCsum   bool
	// UDP source ports cycle through [SportMin, SportMax] (inclusive), as
	// pktgen's udp_src range does in sequential mode.
	SportMin, SportMax uint16
}

// ErrFrame is returned when a frame cannot be built from the config.
var ErrFrame = errors.New("cannot build frame")

// BuildFrame builds thread i's template. srcMAC is the sending
// interface's address when cfg has no SrcMAC.
func BuildFrame(cfg *Config, i int, srcMAC net.HardwareAddr) (*Frame, error) {
	cfg = cfg.ForThread(i)
	if len(cfg.IMIX) > 0 || cfg.MinPktSize != 0 {
		return nil, fmt.Errorf("%w: the userspace backends send one frame size (pkt_size), not ranges or imix", ErrFrame)
	}
	if cfg.DstMAC == nil {
		return nil, fmt.Errorf("%w: no destination MAC", ErrFrame)
	}
	if !cfg.SrcMin.IsValid() {
		return nil, fmt.Errorf("%w: no source address", ErrFrame)
	}
	smac := cfg.SrcMAC
	if smac == nil {
		smac = srcMAC
	}
	if len(smac) != 6 {
		return nil, fmt.Errorf("%w: source MAC %s is not 6 bytes", ErrFrame, smac)
	}
	src := cfg.SrcMin
	if cfg.SrcPerThread {
		src = cfg.ThreadSource(i)
	}
	ipv6 := cfg.ipv6()
	size := cfg.PktSize
	minSize := MinFrame(ipv6, cfg.HasVLAN)
	if size == 0 {
		size = minSize
	}
	if size < minSize {
		return nil, fmt.Errorf("%w: pkt_size %d below %d (headers and the pktgen header)", ErrFrame, size, minSize)
	}
	f := &Frame{Bytes: make([]byte, size), IPv6: ipv6, UDPCsum: hasFlag(cfg.Flags, "UDPCSUM"), Timestamp: !hasFlag(cfg.Flags, "NO_TIMESTAMP")}
	b := f.Bytes
	copy(b[0:6], cfg.DstMAC)
	copy(b[6:12], smac)
	off := 12
	if cfg.HasVLAN {
		binary.BigEndian.PutUint16(b[off:], 0x8100)
		binary.BigEndian.PutUint16(b[off+2:], uint16(cfg.VLANPrio)<<13|uint16(cfg.VLANCFI)<<12|uint16(cfg.VLANID))
		off += 4
	}
	tos := 0
	if cfg.HasTOS {
		tos = cfg.TOS
	}
	if ipv6 {
		binary.BigEndian.PutUint16(b[off:], 0x86dd)
		off += 2
		f.L3Off = off
		binary.BigEndian.PutUint32(b[off:], 6<<28|uint32(tos)<<20)
		binary.BigEndian.PutUint16(b[off+4:], uint16(size-off-40))
		b[off+6], b[off+7] = 17, 32
		s16, d16 := src.As16(), cfg.DstMin.As16()
		copy(b[off+8:], s16[:])
		copy(b[off+24:], d16[:])
		off += 40
	} else {
		binary.BigEndian.PutUint16(b[off:], 0x0800)
		off += 2
		f.L3Off = off
		b[off], b[off+1] = 0x45, byte(tos)
		binary.BigEndian.PutUint16(b[off+2:], uint16(size-off))
		b[off+8], b[off+9] = 32, 17
		s4, d4 := src.As4(), cfg.DstMin.As4()
		copy(b[off+12:], s4[:])
		copy(b[off+16:], d4[:])
		binary.BigEndian.PutUint16(b[off+10:], ^checksum(b[off:off+20], 0))
		off += 20
	}
	f.UDPOff = off
	f.SportMin, f.SportMax = uint16(cfg.UDPSrcMin), uint16(max(cfg.UDPSrcMax, cfg.UDPSrcMin))
	if cfg.UDPSrcMin == 0 && cfg.UDPSrcMax == 0 {
		f.SportMin, f.SportMax = 9, 9 // pktgen's default: the discard port
	}
	dport := cfg.UDPDstMin
	if cfg.UDPDstMin == 0 && cfg.UDPDstMax == 0 {
		dport = 9
	}
	binary.BigEndian.PutUint16(b[off:], f.SportMin)
	binary.BigEndian.PutUint16(b[off+2:], uint16(dport))
	binary.BigEndian.PutUint16(b[off+4:], uint16(size-off))
	off += 8
	f.HdrOff = off
	Header{}.Encode(b[off:])
	return f, nil
}

func hasFlag(flags []string, name string) bool {
	for _, f := range flags {
		if f == name {
			return true
		}
	}
	return false
}

// Stamp writes packet number n's varying fields into buf (a copy of
// Bytes): the sequence seq, the time (unless NO_TIMESTAMP), the UDP
// source port of the cycle, and the UDP checksum when asked for.
func (f *Frame) Stamp(buf []byte, seq uint32, now time.Time) {
	binary.BigEndian.PutUint32(buf[f.HdrOff+4:], seq)
	if f.Timestamp {
		binary.BigEndian.PutUint32(buf[f.HdrOff+8:], uint32(now.Unix()))
		binary.BigEndian.PutUint32(buf[f.HdrOff+12:], uint32(now.Nanosecond()/1000))
	}
	if f.SportMax > f.SportMin {
		span := uint32(f.SportMax-f.SportMin) + 1
		binary.BigEndian.PutUint16(buf[f.UDPOff:], f.SportMin+uint16((seq-1)%span))
	}
	if f.UDPCsum {
		f.udpChecksum(buf)
	}
}

// udpChecksum fills the UDP checksum over the pseudo-header and datagram.
func (f *Frame) udpChecksum(buf []byte) {
	u := buf[f.UDPOff:]
	u[6], u[7] = 0, 0
	var sum uint32
	if f.IPv6 {
		sum = checksumAdd(buf[f.L3Off+8:f.L3Off+40], 0)
	} else {
		sum = checksumAdd(buf[f.L3Off+12:f.L3Off+20], 0)
	}
	sum += 17 + uint32(len(u))
	c := ^checksum(u, sum)
	if c == 0 {
		c = 0xffff
	}
	binary.BigEndian.PutUint16(u[6:], c)
}

// checksum is the folded 16-bit one's-complement sum of b plus initial.
func checksum(b []byte, initial uint32) uint16 {
	s := checksumAdd(b, initial)
	for s>>16 != 0 {
		s = s&0xffff + s>>16
	}
	return uint16(s)
}

func checksumAdd(b []byte, s uint32) uint32 {
	for len(b) >= 2 {
		s += uint32(b[0])<<8 | uint32(b[1])
		b = b[2:]
	}
	if len(b) == 1 {
		s += uint32(b[0]) << 8
	}
	return s
}
