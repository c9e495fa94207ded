package pktgen

// Frame sizes and their cost on the wire, for every package. Config's
// PktSize, pktgen's pkt_size and every "frame bytes" here count the
// Ethernet frame without its FCS, which the NIC appends; RFC 2544's frame
// sizes (64, 1518) count it. On the wire a frame also costs its preamble
// and SFD and the inter-frame gap after it.
const (
	// FCSBytes is the frame check sequence.
	FCSBytes = 4
	// WireOverhead is what a frame without FCS costs on the wire beyond
	// its bytes: the FCS (4), the preamble and SFD (8) and the
	// inter-frame gap (12).
	WireOverhead = FCSBytes + 8 + 12
	// MinFrameSize is the smallest Ethernet frame, FCS included (RFC
	// 2544's 64 bytes; a NIC pads anything shorter); MaxFrameSize the
	// largest a run or a campaign offers: the jumbo frame of a 9000-byte
	// MTU.
	MinFrameSize = 64
	MaxFrameSize = 9018
	// MTUOverhead is what a frame without a VLAN tag carries beyond the
	// MTU, FCS included: the Ethernet header (14) and the FCS; a VLAN tag
	// adds VLANTag.
	MTUOverhead = 14 + FCSBytes
	// VLANTag is an 802.1Q tag.
	VLANTag = 4
	// PktSizeLimit is pktgen's largest pkt_size (a frame without FCS),
	// the bound of a frame on an interface whose MTU is unknown.
	PktSizeLimit = 65535
)

// MaxFrame is the largest frame, FCS included, an interface of mtu
// carries (tagged: vlan); with the MTU unknown (0), the largest pktgen
// builds (PktSizeLimit and the FCS).
func MaxFrame(mtu int, vlan bool) int {
	if mtu <= 0 {
		return PktSizeLimit + FCSBytes
	}
	if vlan {
		return mtu + MTUOverhead + VLANTag
	}
	return mtu + MTUOverhead
}

// L2Bits is the bit rate of pps frames of frameBytes (without FCS),
// counting the FCS.
func L2Bits(pps, frameBytes float64) float64 { return pps * (frameBytes + FCSBytes) * 8 }

// L1Bits is the wire bit rate of pps frames of frameBytes (without FCS):
// frame, FCS, preamble and SFD, inter-frame gap.
func L1Bits(pps, frameBytes float64) float64 { return pps * (frameBytes + WireOverhead) * 8 }

// LinePPS is the line rate in frames per second of a link of speedMbps
// carrying frames of frameBytes (without FCS): 64-byte frames (60 + FCS)
// at 10 Gb/s are 14 880 952 pps; 0 when either is unknown.
func LinePPS(speedMbps, frameBytes float64) float64 {
	if speedMbps <= 0 || frameBytes <= 0 {
		return 0
	}
	return speedMbps * 1e6 / ((frameBytes + WireOverhead) * 8)
}

// MinFrameSizeFor is the smallest frame size, FCS and any 802.1Q tag
// included, of a frame of the family (IPv6 or IPv4) and tagging that
// carries the pktgen header: RFC 2544's 64 bytes, or more where the
// headers need it: 64 for IPv4, 66 for IPv4 tagged, 82 for IPv6 (RFC
// 5180 says the same: 64 bytes cannot hold an IPv6 test frame), 86 for
// IPv6 tagged. A frame size counts the tag (it is on the wire, in
// pkt_size, and what the line rate divides by): 64 untagged bytes sent
// tagged are a 68-byte frame.
func MinFrameSizeFor(ipv6, vlan bool) int {
	return max(MinFrameSize, MinFrame(ipv6, vlan)+FCSBytes)
}

// FrameRange is the range of frame sizes, FCS included, that c's
// headers allow on an interface of mtu (0: unknown): at least
// MinFrameSize and room for the headers, at most MaxFrame. headers is
// that room: MinFrame (the Ethernet, IP and UDP headers and the pktgen
// header) and the FCS.
func (c *Config) FrameRange(mtu int) (lo, hi, headers int) {
	headers = MinFrame(c.ipv6(), c.HasVLAN) + FCSBytes
	return MinFrameSizeFor(c.ipv6(), c.HasVLAN), MaxFrame(mtu, c.HasVLAN), headers
}
