package coordinator

import (
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/linerate/linerate/pktgen"
)

// The smallest frame size follows the run's family and tag (its default
// too), and sizes below it are refused naming the family and the range.
func TestSpecFrameSizeByFamily(t *testing.T) {
	for _, tt := range []struct {
		ipv6    bool
		vlan    int
		min     int
		refusal string
		headers string
	}{
		{false, 0, 64, "frame size 63: want 64 to 9018 bytes (Ethernet frame including FCS)", ""},
		{false, 100, 66, "frame size 65: want 66 to 9018 bytes with an 802.1Q tag", "14 B Ethernet + 4 B tag + 20 B IPv4"},
		{true, 0, 82, "frame size 81: want 82 to 9018 bytes for IPv6", "14 B Ethernet + 40 B IPv6 + 8 B UDP + 16 B pktgen header + 4 B FCS"},
		{true, 4094, 86, "frame size 85: want 86 to 9018 bytes for IPv6 with an 802.1Q tag", "4 B tag + 40 B IPv6"},
	} {
		s := Spec{Senders: []string{"s1"}, Receivers: []string{"r1"}, Count: 1, IPv6: tt.ipv6, VLAN: tt.vlan}
		if err := s.Validate(); err != nil || s.FrameSize != tt.min {
			t.Errorf("ipv6 %v vlan %d: default frame size %d (%v), want %d", tt.ipv6, tt.vlan, s.FrameSize, err, tt.min)
		}
		s.FrameSize = tt.min - 1
		err := s.Validate()
		if err == nil || !strings.Contains(err.Error(), tt.refusal) || !strings.Contains(err.Error(), tt.headers) {
			t.Errorf("ipv6 %v vlan %d, %d B: %v, want %q", tt.ipv6, tt.vlan, tt.min-1, err, tt.refusal)
		}
	}
	s := Spec{Senders: []string{"s1"}, Receivers: []string{"r1"}, Duration: time.Second, IPv6: true}
	s.IMIX = pktgen.IMIX{{Size: 64, Weight: 7}}
	if err := s.Validate(); err == nil || !strings.Contains(err.Error(), "imix entry 64:7: frame size 64: want 82") {
		t.Errorf("an IPv6 imix with 64 B frames: %v", err)
	}
}

// A VLAN id is one 802.1Q can carry: 1-4094 (0 is untagged).
func TestSpecVLANRange(t *testing.T) {
	for _, v := range []int{-1, 4095, 4096} {
		s := Spec{Senders: []string{"s1"}, Receivers: []string{"r1"}, Count: 1, VLAN: v}
		if err := s.Validate(); err == nil || !strings.Contains(err.Error(), "want an 802.1Q VLAN id 1-4094") {
			t.Errorf("vlan %d: %v", v, err)
		}
	}
}

// A receiver's address follows the run's family and is never link-local.
func TestDataAddrFamily(t *testing.T) {
	ips := func(ss ...string) []netip.Addr {
		var out []netip.Addr
		for _, s := range ss {
			out = append(out, netip.MustParseAddr(s))
		}
		return out
	}
	for _, tt := range []struct {
		ips  []netip.Addr
		ipv6 bool
		want string
	}{
		{ips("fe80::1", "198.18.0.101", "2001:2::65"), false, "198.18.0.101"},
		{ips("fe80::1", "198.18.0.101", "2001:2::65"), true, "2001:2::65"},
		{ips("198.18.0.101", "fe80::1%data0"), true, "invalid IP"},
		{ips("fe80::1"), false, "invalid IP"},
		{ips("fd00::5", "2001:2::65"), true, "fd00::5"},
	} {
		if got := dataAddr(tt.ips, tt.ipv6); got.String() != tt.want {
			t.Errorf("%v, ipv6 %v: %s, want %s", tt.ips, tt.ipv6, got, tt.want)
		}
	}
	s := Spec{IPv6: true}
	if err := s.noDataAddr("eth1"); !strings.Contains(err.Error(), "eth1 has no IPv6 address") || !strings.Contains(err.Error(), "fe80::/10") {
		t.Errorf("no IPv6 address: %v", err)
	}
}

// A VLAN reaches the senders' configuration; none leaves it untagged.
func TestSenderConfigVLAN(t *testing.T) {
	p := sendPlan{frame: 78, dst: endpoint{ip: netip.MustParseAddr("2001:2::65"), mac: "02:00:00:00:01:01"}}
	if c := senderConfig(p); c.VlanId != nil || c.DstMin != "2001:2::65" {
		t.Errorf("untagged: %v", c)
	}
	p.vlan = 100
	if c := senderConfig(p); c.VlanId == nil || *c.VlanId != 100 {
		t.Errorf("VLAN 100: %v", c)
	}
}
