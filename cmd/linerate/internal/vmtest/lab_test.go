//go:build linux && traffic

package vmtest

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/linerate/linerate/cmd/linerate/internal/e2e"
)

// nsExecShim stands in for iproute2's `ip netns exec` in the guest, whose
// busybox ip has no netns: enter the namespace, and in a mount namespace
// of its own remount /sys so that the program sees the namespace's
// interfaces there, as `ip netns exec` does. Everything else goes to
// busybox ip.
const nsExecShim = `#!/bin/sh
if [ "$1" = netns ] && [ "$2" = exec ]; then
	ns=$3; shift 3
	exec nsenter --net=/run/netns/$ns unshare -m /bin/sh -c 'mount --make-rslave / 2>/dev/null; umount -l /sys && mount -t sysfs sysfs /sys; exec "$@"' sh "$@"
fi
exec busybox ip "$@"
`

// TestLabRealPktgen is the 2×2 lab run of `linerate lab run` inside the
// guest, whose kernel has pktgen: the sender agents' backend is the
// kernel's pktgen, driven by the coordinator through the agents, and
// every flow balances to the packet.
func TestLabRealPktgen(t *testing.T) {
	k := SkipUnlessAvailable(t)
	if testing.Short() {
		t.Skip("boots a guest and runs a lab of four agents in it")
	}
	bin := e2e.Binary(t)
	shim := filepath.Join(t.TempDir(), "ip")
	if err := os.WriteFile(shim, []byte(nsExecShim), 0o755); err != nil {
		t.Fatal(err)
	}
	g := &Guest{
		Kernel:  k,
		Modules: []string{"veth", "pktgen", "bridge"},
		Files:   map[string]string{"/bin/linerate": bin, "/usr/local/bin/ip": shim},
		CPUs:    2,
		Memory:  "1G",
		Script: `mkdir -p /run /var && ln -sf /run /var/run && mount -t tmpfs tmpfs /run
export PATH=/usr/local/bin:$PATH
echo "== json"
linerate lab run --name g --senders 2 --receivers 2 --count 20000 --backend kernel --json --log-level warn --ready-timeout 60s 2>/tmp/run.err
rc=$?
echo "== end"
echo "== run stderr"; cat /tmp/run.err
echo "== imix"
linerate lab campaign --name gi --senders 1 --receivers 1 --sizes imix --search none --rates 2000 --trial-duration 1s \
	--backend kernel --json --log-level warn --ready-timeout 60s --results-dir /tmp/results 2>/tmp/imix.err || rc=1
echo "== imix end"
echo "== imix stderr"; cat /tmp/imix.err
echo "leftover namespaces: $(ls /run/netns 2>/dev/null | wc -l)"
exit $rc
`,
		Timeout: 6 * time.Minute,
		Log:     TestLogger(t),
	}
	res, err := g.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("guest ran %s, exit %d; output:\n%s", res.Duration.Round(time.Millisecond), res.ExitCode, res.Output)
	if res.ExitCode != 0 {
		t.Fatalf("lab run in the guest failed (exit %d); console:\n%s", res.ExitCode, res.Console)
	}
	var out struct {
		Status string `json:"status"`
		Flows  []struct {
			Sender, Receiver     string
			Sent, Received, Lost uint64
		} `json:"flows"`
		Hosts []struct {
			Name, Role, Backend string
		} `json:"hosts"`
	}
	decodeSection(t, res.Output, "== json", "== end", &out)
	if out.Status != "ok" || len(out.Flows) != 2 {
		t.Fatalf("status %s, %d flows", out.Status, len(out.Flows))
	}
	for _, f := range out.Flows {
		if f.Sent != 20000 || f.Received != 20000 || f.Lost != 0 {
			t.Errorf("flow %s→%s: sent %d received %d lost %d", f.Sender, f.Receiver, f.Sent, f.Received, f.Lost)
		}
	}
	for _, h := range out.Hosts {
		if h.Role == "sender" && h.Backend != "kernel" {
			t.Errorf("sender %s used backend %q, not the kernel's pktgen", h.Name, h.Backend)
		}
	}
	// The imix campaign: pktgen's imix_weights through the whole chain.
	var camp struct {
		Status  string `json:"status"`
		Summary []struct {
			Label         string  `json:"label"`
			ThroughputPPS float64 `json:"throughput_pps"`
		} `json:"summary"`
		Trials []struct {
			Sent, Received, Lost uint64
		} `json:"trials"`
	}
	decodeSection(t, res.Output, "== imix\n", "== imix end", &camp)
	if camp.Status != "ok" || len(camp.Summary) != 1 || camp.Summary[0].Label != "imix 64:7 570:4 1518:1" || camp.Summary[0].ThroughputPPS != 2000 ||
		len(camp.Trials) != 1 || camp.Trials[0].Sent < 1500 || camp.Trials[0].Received != camp.Trials[0].Sent || camp.Trials[0].Lost != 0 {
		t.Errorf("imix campaign: %+v", camp)
	}
	if !strings.Contains(res.Output, "leftover namespaces: 0") {
		t.Errorf("the lab left namespaces in the guest")
	}
}

// decodeSection decodes the JSON value the guest script printed between
// the marker lines from and to (the commands' logs go to files the script
// prints after the markers; anything after the value is ignored).
func decodeSection(t *testing.T, out, from, to string, v any) {
	t.Helper()
	body := out
	if i := strings.Index(body, from); i >= 0 {
		body = body[i+len(from):]
	}
	if i := strings.Index(body, to); i >= 0 {
		body = body[:i]
	}
	i := strings.Index(body, "{")
	if i < 0 {
		t.Fatalf("no JSON between %q and %q:\n%s", from, to, body)
	}
	if err := json.NewDecoder(strings.NewReader(body[i:])).Decode(v); err != nil {
		t.Fatalf("JSON between %q and %q: %v\n%s", from, to, err, body)
	}
}
