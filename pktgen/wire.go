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
)

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
