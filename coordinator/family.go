package coordinator

import (
	"fmt"
	"net/netip"

	"github.com/linerate/linerate/pktgen"
)

// What a run's frames carry beyond IPv4 (Spec.IPv6, Spec.VLAN): the
// frame sizes they allow and the receiver address they go to.

// MinFrameSize is the smallest frame size, FCS and tag included, the
// run's frames carry their headers in (pktgen.MinFrameSizeFor): 64 B
// for IPv4, 66 B tagged, 82 B for IPv6, 86 B tagged. It is the default
// frame size.
func (s *Spec) MinFrameSize() int { return pktgen.MinFrameSizeFor(s.IPv6, s.VLAN != 0) }

// CheckFrameSize refuses a frame size (Ethernet frame with FCS, and the
// tag with a VLAN) outside what the run's headers allow, naming them.
func (s *Spec) CheckFrameSize(size int) error {
	lo := s.MinFrameSize()
	if size >= lo && size <= pktgen.MaxFrameSize {
		return nil
	}
	return fmt.Errorf("frame size %d: want %d to %d bytes%s (Ethernet frame including FCS%s)", size, lo, pktgen.MaxFrameSize, s.FamilyText(), s.HeadersText())
}

// FamilyText names what sets the smallest frame, for a refusal: " for
// IPv6 with an 802.1Q tag", or nothing for IPv4 untagged.
func (s *Spec) FamilyText() string {
	switch {
	case s.IPv6 && s.VLAN != 0:
		return " for IPv6 with an 802.1Q tag"
	case s.IPv6:
		return " for IPv6"
	case s.VLAN != 0:
		return " with an 802.1Q tag"
	}
	return ""
}

// HeadersText spells out, for a refusal, the headers of a frame whose
// smallest size is above RFC 2544's 64 B (nothing otherwise).
func (s *Spec) HeadersText() string {
	if s.MinFrameSize() == pktgen.MinFrameSize {
		return ""
	}
	ip, tag := "20 B IPv4", ""
	if s.IPv6 {
		ip = "40 B IPv6"
	}
	if s.VLAN != 0 {
		tag = fmt.Sprintf(" + %d B tag", pktgen.VLANTag)
	}
	return fmt.Sprintf(", the tag counted: 14 B Ethernet%s + %s + 8 B UDP + %d B pktgen header + %d B FCS", tag, ip, pktgen.HeaderLen, pktgen.FCSBytes)
}

// CheckVLAN refuses a VLAN id outside 802.1Q's usable 1-4094.
func (s *Spec) CheckVLAN() error {
	if s.VLAN < 0 || s.VLAN > 4094 {
		return fmt.Errorf("vlan %d: want an 802.1Q VLAN id 1-4094 (0: untagged; 4095 is reserved)", s.VLAN)
	}
	return nil
}

// dataAddr is the address to send a receiver's flows to, of its data
// addresses ips: with ipv6 its first IPv6 one that is not link-local
// (fe80::/10: valid on one link only, with a zone no frame carries);
// without, its first IPv4 one, or that IPv6 one when it has no IPv4
// address. Invalid when it has none.
func dataAddr(ips []netip.Addr, ipv6 bool) netip.Addr {
	var v4, v6 netip.Addr
	for _, a := range ips {
		a = a.Unmap()
		switch {
		case a.Is4() && !v4.IsValid():
			v4 = a
		case a.Is6() && !a.IsLinkLocalUnicast() && !v6.IsValid():
			v6 = a.WithZone("")
		}
	}
	if ipv6 || !v4.IsValid() {
		return v6
	}
	return v4
}

// noDataAddr is describe's refusal of receiver n, whose data interface
// has no address of the run's family.
func (s *Spec) noDataAddr(iface string) error {
	if s.IPv6 {
		return fmt.Errorf("describe: its data interface %s has no IPv6 address to send to (--ipv6; a link-local fe80::/10 one is never a test address): give it a global or unique-local address (the benchmarking range is 2001:2::/48), or run over IPv4", iface)
	}
	return fmt.Errorf("describe: its data interface %s has no address to send to", iface)
}
