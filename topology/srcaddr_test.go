package topology

import (
	"net/netip"
	"testing"
)

func TestSourceAddr(t *testing.T) {
	addrs := func(s ...string) []netip.Addr {
		var out []netip.Addr
		for _, a := range s {
			out = append(out, netip.MustParseAddr(a))
		}
		return out
	}
	for _, tc := range []struct {
		name  string
		addrs []netip.Addr
		dst   string
		want  string // "" = none
	}{
		{"ipv4 first of its family", addrs("fe80::1", "198.18.0.1", "198.18.0.2"), "198.18.1.1", "198.18.0.1"},
		{"ipv4 skips link-local", addrs("169.254.3.4", "198.18.0.9"), "198.18.1.1", "198.18.0.9"},
		{"ipv6 skips link-local", addrs("198.18.0.1", "fe80::1", "2001:2::5"), "2001:2::9", "2001:2::5"},
		{"ipv6 only link-local: none", addrs("198.18.0.1", "fe80::1"), "2001:2::9", ""},
		{"ipv6 link-local destination takes link-local", addrs("fe80::1"), "fe80::2", "fe80::1"},
		{"mapped ipv4 reads as ipv4", addrs("::ffff:198.18.0.7"), "198.18.1.1", "198.18.0.7"},
		{"unspecified skipped", addrs("0.0.0.0", "198.18.0.3"), "198.18.1.1", "198.18.0.3"},
		{"no address", nil, "198.18.1.1", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := SourceAddr(tc.addrs, netip.MustParseAddr(tc.dst))
			if tc.want == "" {
				if ok {
					t.Fatalf("SourceAddr = %s, want none", got)
				}
				return
			}
			if !ok || got != netip.MustParseAddr(tc.want) {
				t.Fatalf("SourceAddr = %s, %v; want %s", got, ok, tc.want)
			}
		})
	}
}
