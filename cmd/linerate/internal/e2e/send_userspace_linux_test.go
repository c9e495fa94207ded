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
	for _, tc := range []struct {
		backend, want, log string
		args               []string
		note               string
	}{
		{"xdp", "xdp", "", nil, ""},
		{"afxdp", "afxdp", "", nil, "need_wakeup off (auto): lra's driver veth is a virtual device"},
		{"afxdp", "afxdp", "", []string{"--need-wakeup", "on"}, "need_wakeup on: asked for; bound with XDP_USE_NEED_WAKEUP"},
		{"afpacket", "afpacket", "", nil, ""},
		{"userspace", "xdp", "backend xdp", nil, ""},
	} {
		t.Run(strings.Join(append([]string{tc.backend}, tc.args...), " "), func(t *testing.T) {
			if tc.backend == "xdp" {
				pktgentest.SkipUnlessLiveFrames(t)
			}
			if refused, why := pktgentest.LiveFramesRefused(); refused && tc.backend == "userspace" {
				// The choice falls to AF_XDP, and says why.
				t.Logf("live frames refused here (%v): userspace must choose afxdp", why)
				tc.want, tc.log = "afxdp", "XDP live frames cannot send from lra"
			}
			const total = 20_001
			s := pktgentest.NewSetup(t, 2, []int{0, 1}, 20_000, func(c *pktgen.Config) { c.Flags, c.SrcMin = []string{"UDPCSUM"}, netip.MustParseAddr("198.18.0.11") })
			args := append([]string{"netns", "exec", s.Pair.A.NS.Name, bin, "send", "--iface", "lra", "--dst", "198.18.0.2", "--src", "198.18.0.11",
				"--count", "20001", "--cpus", "0-1", "--udp-src", "1000-1006", "--udp-csum", "--backend", tc.backend, "--json"}, tc.args...)
			cmd := exec.Command("ip", args...)
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
			if tc.note != "" && !strings.Contains(strings.Join(sum.Notes, "\n"), tc.note) {
				t.Errorf("notes %q do not say %q", sum.Notes, tc.note)
			}
			s.Verify(t, &sum, from, time.Now())
		})
	}
}

// TestSendUserspaceFallsBackToAFXDP checks that on a veth whose peer has
// no XDP program, which cannot transmit XDP frames, userspace picks
// afxdp (an AF_XDP socket binds there, in copy mode) and says why.
func TestSendUserspaceFallsBackToAFXDP(t *testing.T) {
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
	if sum.Backend != "afxdp" || sum.Packets != 1000 || !strings.Contains(stderr.String(), "peer needs an XDP program") ||
		!strings.Contains(stderr.String(), "an AF_XDP socket binds to it") {
		t.Errorf("summary %+v\nstderr %s", sum, stderr.String())
	}
}
