package pktgen

import (
	"errors"
	"math"
	"net/netip"
	"strings"
	"testing"
)

// The smallest frame of each family and tagging, by hand: Ethernet 14,
// the tag 4, IPv4 20 or IPv6 40, UDP 8, the pktgen header 16, FCS 4; and
// never below RFC 2544's 64.
func TestMinFrameSizeFor(t *testing.T) {
	for _, tt := range []struct {
		v6, vlan bool
		want     int
	}{
		{false, false, 64}, // 14+20+8+16+4 = 62, padded to 64
		{false, true, 66},  // 14+4+20+8+16+4
		{true, false, 82},  // 14+40+8+16+4
		{true, true, 86},   // 14+4+40+8+16+4
	} {
		if got := MinFrameSizeFor(tt.v6, tt.vlan); got != tt.want {
			t.Errorf("MinFrameSizeFor(ipv6 %v, vlan %v) = %d, want %d", tt.v6, tt.vlan, got, tt.want)
		}
	}
	c := &Config{DstMin: netip.MustParseAddr("2001:2::65"), HasVLAN: true, VLANID: 100}
	if lo, hi, headers := c.FrameRange(1500); lo != 86 || hi != 1522 || headers != 86 {
		t.Errorf("IPv6 tagged on MTU 1500: %d-%d (headers %d), want 86-1522 (86)", lo, hi, headers)
	}
}

// Line rate in frames per second: the frame (its size counts FCS and any
// tag) plus preamble, SFD and inter-frame gap (20 B), by hand at 10 Gb/s.
func TestLinePPSHandValues(t *testing.T) {
	for _, tt := range []struct {
		what string
		size int // frame size with FCS
		want float64
	}{
		{"64 B (RFC 2544)", 64, 14_880_952.38},                     // 1e10 / (84*8)
		{"66 B, IPv4 tagged minimum", 66, 14_534_883.72},           // 1e10 / (86*8)
		{"68 B, 64 untagged bytes sent tagged", 68, 14_204_545.45}, // 1e10 / (88*8)
		{"82 B, IPv6 minimum", 82, 12_254_901.96},                  // 1e10 / (102*8)
		{"86 B, IPv6 tagged minimum", 86, 11_792_452.83},           // 1e10 / (106*8)
		{"1518 B", 1518, 812_743.82},                               // 1e10 / (1538*8)
		{"1522 B, 1518 sent tagged", 1522, 810_635.54},             // 1e10 / (1542*8)
	} {
		got := LinePPS(10_000, float64(tt.size-FCSBytes))
		if math.Abs(got-tt.want) > 0.01 {
			t.Errorf("%s at 10 Gb/s: %.2f pps, want %.2f", tt.what, got, tt.want)
		}
	}
}

// A link-local IPv6 address is refused as a source or a destination, by
// field.
func TestValidateRefusesLinkLocal(t *testing.T) {
	base := func() *Config {
		return &Config{Device: "data0", CPUs: []int{0, 1}, PktSize: 78, Count: 10,
			DstMin: netip.MustParseAddr("2001:2::65"), SrcMin: netip.MustParseAddr("2001:2::1"), SrcPerThread: true,
			DstMAC: []byte{2, 0, 0, 0, 0, 2}}
	}
	if err := base().Validate(); err != nil {
		t.Fatalf("a global IPv6 send: %v", err)
	}
	ll := netip.MustParseAddr("fe80::1")
	for field, change := range map[string]func(*Config){
		"dst": func(c *Config) { c.DstMin = ll },
		"src": func(c *Config) { c.SrcMin = ll },
		"thread_dst": func(c *Config) {
			c.ThreadDst = []Dest{{Addr: netip.MustParseAddr("2001:2::65"), MAC: c.DstMAC}, {Addr: ll, MAC: c.DstMAC}}
		},
	} {
		c := base()
		change(c)
		err := c.Validate()
		if err == nil || !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), field+": ") ||
			!strings.Contains(err.Error(), "fe80::1 is IPv6 link-local (fe80::/10)") || !strings.Contains(err.Error(), "2001:2::/48") {
			t.Errorf("%s fe80::1: %v, want it refused by name", field, err)
		}
	}
}
