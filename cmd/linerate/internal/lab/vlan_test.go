//go:build linux

package lab

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"testing"
)

// A lab's VLAN is an 802.1Q id, 1-4094 (0: untagged; 4095 is
// reserved); its agents may tag with it and no other.
func TestSpecVLAN(t *testing.T) {
	for _, v := range []int{0, 1, 100, 4094} {
		spec := Spec{Name: "v", Senders: 1, Receivers: 1, VLAN: v}
		if err := spec.Validate(); err != nil {
			t.Errorf("VLAN %d: %v", v, err)
		}
	}
	for _, v := range []int{-1, 4095, 4096} {
		spec := Spec{Name: "v", Senders: 1, Receivers: 1, VLAN: v}
		if err := spec.Validate(); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("--vlan %d: want an 802.1Q VLAN id 1-4094", v)) {
			t.Errorf("VLAN %d: %v, want it refused with the valid range", v, err)
		}
	}
	if s := (Spec{VLAN: 100}).vlanSettings(); len(s) != 1 || s[0].Key != "allow-vlan" || !slices.Equal(s[0].Values, []string{"100"}) {
		t.Errorf("VLAN 100: agent settings %+v, want allow-vlan: [100]", s)
	}
	if s := (Spec{}).vlanSettings(); s != nil {
		t.Errorf("no VLAN: agent settings %v, want none", s)
	}
}

// Every host has an IPv4 and an IPv6 data address from the benchmarking
// ranges, the same last octet in both.
func TestDataAddrs(t *testing.T) {
	for octet, want := range map[int][2]string{1: {"198.18.0.1/24", "2001:2::1/64"}, 101: {"198.18.0.101/24", "2001:2::65/64"}} {
		v4, v6 := dataAddrs(octet)
		if v4.String() != want[0] || v6.String() != want[1] {
			t.Errorf("host %d: %s and %s, want %s and %s", octet, v4, v6, want[0], want[1])
		}
		if !netip.MustParsePrefix("2001:2::/48").Contains(v6.Addr()) || v6.Addr().IsLinkLocalUnicast() {
			t.Errorf("host %d: %s outside 2001:2::/48", octet, v6)
		}
	}
}
