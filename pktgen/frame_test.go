package pktgen

import (
	"encoding/binary"
	"net"
	"net/netip"
	"testing"
	"time"
)

func TestBuildFrameIPv4(t *testing.T) {
	c := baseConfig()
	c.PktSize, c.UDPSrcMin, c.UDPSrcMax, c.UDPDstMin, c.Flags = 60, 1000, 1002, 5001, nil
	src, _ := net.ParseMAC("02:00:00:00:00:01")
	f, err := BuildFrame(&c, 1, src)
	if err != nil {
		t.Fatal(err)
	}
	b := f.Bytes
	if len(b) != 60 || f.HdrOff != 42 || f.UDPOff != 34 || f.L3Off != 14 {
		t.Fatalf("len %d offsets %d %d %d", len(b), f.L3Off, f.UDPOff, f.HdrOff)
	}
	if checksum(b[14:34], 0) != 0xffff {
		t.Error("IPv4 header checksum does not verify")
	}
	if netip.AddrFrom4([4]byte(b[26:30])) != netip.MustParseAddr("198.18.1.2") || binary.BigEndian.Uint16(b[36:]) != 5001 {
		t.Errorf("thread 1 source %v, dport %d", b[26:30], binary.BigEndian.Uint16(b[36:]))
	}
	if b[22] != 32 || b[23] != 17 || binary.BigEndian.Uint16(b[16:]) != 46 || binary.BigEndian.Uint16(b[38:]) != 26 {
		t.Errorf("ttl %d proto %d totlen %d udplen %d", b[22], b[23], binary.BigEndian.Uint16(b[16:]), binary.BigEndian.Uint16(b[38:]))
	}
	buf := append([]byte(nil), b...)
	now := time.Unix(1700000000, 123456000)
	for seq, port := range map[uint32]uint16{1: 1000, 2: 1001, 3: 1002, 4: 1000} {
		f.Stamp(buf, seq, now)
		h, err := DecodeHeader(buf[f.HdrOff:])
		if err != nil || h.Seq != seq || h.TvSec != 1700000000 || h.TvUsec != 123456 {
			t.Errorf("seq %d: header %+v %v", seq, h, err)
		}
		if p := binary.BigEndian.Uint16(buf[34:]); p != port {
			t.Errorf("seq %d: sport %d, want %d", seq, p, port)
		}
	}
}

func TestBuildFrameIPv6VLANChecksum(t *testing.T) {
	c := baseConfig()
	c.DstMin, c.SrcMin, c.PktSize = netip.MustParseAddr("2001:2::2"), netip.MustParseAddr("2001:2::10"), 100
	c.HasVLAN, c.VLANID, c.VLANPrio = true, 42, 5
	c.Flags = []string{"UDPCSUM", "NO_TIMESTAMP"}
	src, _ := net.ParseMAC("02:00:00:00:00:01")
	f, err := BuildFrame(&c, 0, src)
	if err != nil {
		t.Fatal(err)
	}
	if f.HdrOff != HeaderOffset(true, 1, 0) || binary.BigEndian.Uint16(f.Bytes[12:]) != 0x8100 || binary.BigEndian.Uint16(f.Bytes[14:])&0xfff != 42 {
		t.Fatalf("offsets/vlan: hdr %d", f.HdrOff)
	}
	buf := append([]byte(nil), f.Bytes...)
	f.Stamp(buf, 7, time.Now())
	// Verify the UDP checksum over the pseudo-header.
	u := buf[f.UDPOff:]
	sum := checksumAdd(buf[f.L3Off+8:f.L3Off+40], 0) + 17 + uint32(len(u))
	if checksum(u, sum) != 0xffff {
		t.Error("UDP checksum does not verify")
	}
	if h, _ := DecodeHeader(buf[f.HdrOff:]); h.TvSec != 0 || h.Seq != 7 {
		t.Errorf("NO_TIMESTAMP header %+v", h)
	}
}

func TestBuildFrameErrors(t *testing.T) {
	c := baseConfig()
	c.PktSize, c.IMIX = 0, IMIX{{64, 1}}
	if _, err := BuildFrame(&c, 0, nil); err == nil {
		t.Error("imix accepted")
	}
	c = baseConfig()
	if _, err := BuildFrame(&c, 0, net.HardwareAddr{1}); err == nil {
		t.Error("short source MAC accepted")
	}
}
