//go:build linux && traffic

package e2e

import (
	"encoding/json"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/linerate/linerate/internal/netns/nstest"
	"github.com/linerate/linerate/pktgen"
	"github.com/linerate/linerate/pktgen/pktgentest"
)

// TestSendUserspaceBackends runs the real binary inside a sender
// namespace (as `ip netns exec` users do) with each userspace backend and
// checks every frame at the peer.
func TestSendUserspaceBackends(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: creates network namespaces and runs XDP")
	}
	bin := Binary(t)
	for _, tc := range []struct{ backend, want, log string }{
		{"xdp", "xdp", ""},
		{"afpacket", "afpacket", ""},
		{"userspace", "xdp", "backend xdp"},
	} {
		t.Run(tc.backend, func(t *testing.T) {
			const total = 20_001
			s := pktgentest.NewSetup(t, 2, []int{0, 1}, 20_000, func(c *pktgen.Config) { c.Flags, c.SrcMin = []string{"UDPCSUM"}, netip.MustParseAddr("198.18.0.11") })
			cmd := exec.Command("ip", "netns", "exec", s.Pair.A.NS.Name, bin, "send", "--iface", "lra", "--dst", "198.18.0.2", "--src", "198.18.0.11",
				"--count", "20001", "--cpus", "0-1", "--udp-src", "1000-1006", "--udp-csum", "--backend", tc.backend, "--json")
			var stderr strings.Builder
			cmd.Stderr = &stderr
			from := time.Now()
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("linerate send: %v\n%s", err, stderr.String())
			}
			var sum pktgen.Summary
			if err := json.Unmarshal(out, &sum); err != nil {
				t.Fatalf("summary JSON: %v\n%s", err, out)
			}
			if sum.Backend != tc.want || sum.Packets != total || sum.Device != "lra" || !strings.Contains(stderr.String(), tc.log) {
				t.Errorf("summary %+v\nstderr %s", sum, stderr.String())
			}
			s.Verify(t, &sum, from, time.Now())
		})
	}
}

// TestSendUserspaceFallsBackToAFPacket checks that on a veth whose peer has
// no XDP program, which cannot transmit XDP frames, userspace picks
// afpacket and says why.
func TestSendUserspaceFallsBackToAFPacket(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: creates network namespaces")
	}
	bin := Binary(t)
	p := nstest.NewPair(t, 1)
	cmd := exec.Command("ip", "netns", "exec", p.A.NS.Name, bin, "send", "--iface", "lra", "--dst", "198.18.0.2", "--src", "198.18.0.11",
		"--count", "1000", "--backend", "userspace", "--json")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("linerate send: %v\n%s", err, stderr.String())
	}
	var sum pktgen.Summary
	if err := json.Unmarshal(out, &sum); err != nil {
		t.Fatalf("summary JSON: %v\n%s", err, out)
	}
	if sum.Backend != "afpacket" || sum.Packets != 1000 || !strings.Contains(stderr.String(), "peer needs an XDP program") {
		t.Errorf("summary %+v\nstderr %s", sum, stderr.String())
	}
}
