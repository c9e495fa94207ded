//go:build linux && traffic

package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/linerate/linerate/doctor"
	"github.com/linerate/linerate/internal/netns/nstest"
)

// TestDoctorFixRestore runs `linerate doctor` as an operator would, in the
// namespace of a real veth (ip netns exec: its own sysfs and ruleset):
// RPS on both rx queues and a firewall that tracks connections are WARN
// and FAIL; --fix-rps --fix-notrack fixes them (journaled, the report
// then passes them, exit 0), and --restore puts back the masks and the
// ruleset byte for byte; a second restore finds nothing.
func TestDoctorFixRestore(t *testing.T) {
	requireNft(t)
	bin := Binary(t)
	p := nstest.NewPair(t, 2)
	ns, iface, state := p.B.NS.Name, p.B.Name, t.TempDir()
	in := func(stdin string, args ...string) (string, error) {
		cmd := exec.Command("ip", append([]string{"netns", "exec", ns}, args...)...)
		cmd.Stdin = strings.NewReader(stdin)
		out, err := cmd.Output()
		return string(out), err
	}
	must := func(stdin string, args ...string) string {
		t.Helper()
		out, err := in(stdin, args...)
		if err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
		return out
	}
	masks := func() string {
		return must("", "sh", "-c", "cat /sys/class/net/"+iface+"/queues/rx-*/rps_cpus")
	}
	must("", "sh", "-c", "for q in /sys/class/net/"+iface+"/queues/rx-*; do echo 3 > $q/rps_cpus; done")
	must("table inet filter {\n\tchain input {\n\t\ttype filter hook input priority filter; policy accept;\n\t\tct state established,related accept\n\t}\n}\n", "nft", "-f", "-")
	beforeMasks, beforeRules := masks(), must("", "nft", "list", "ruleset")

	doc := func(args ...string) (doctorJSON, int) {
		t.Helper()
		out, err := in("", append([]string{bin, "doctor", "--iface", iface, "--role", "receiver", "--cpus", "0", "--addrs", "198.18.0.1,198.18.0.2", "--state-dir", state, "--json"}, args...)...)
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		var d doctorJSON
		if err := json.Unmarshal([]byte(out), &d); err != nil {
			t.Fatalf("doctor %v: %v\n%s", args, err, out)
		}
		return d, code
	}
	status := func(d doctorJSON, id string) doctor.Status {
		if c := d.Find(id); c != nil {
			return c.Status
		}
		return ""
	}
	d, code := doc()
	if code != 1 || status(d, "conntrack") != doctor.Fail || status(d, "steering") != doctor.Warn {
		t.Fatalf("before the fix: exit %d, conntrack %s, steering %s: want 1, FAIL, WARN", code, status(d, "conntrack"), status(d, "steering"))
	}
	d, code = doc("--fix-rps", "--fix-notrack")
	if code != 0 || status(d, "conntrack") != doctor.Pass || status(d, "steering") != doctor.Pass || len(d.Fixed) != 3 {
		t.Fatalf("after the fix: exit %d, conntrack %s, steering %s, fixed %+v: want 0, PASS, PASS, two masks and the table", code, status(d, "conntrack"), status(d, "steering"), d.Fixed)
	}
	if m := masks(); strings.Contains(m, "3") {
		t.Errorf("rps masks after the fix: %q", m)
	}
	if _, err := os.Stat(filepath.Join(state, "irq-"+iface+".json")); err != nil {
		t.Errorf("no journal of the fixes: %v", err)
	}
	out := must("", bin, "doctor", "--restore", "--state-dir", state)
	if !strings.Contains(out, "nft-table") || !strings.Contains(out, "restored") {
		t.Errorf("restore said:\n%s", out)
	}
	if m, r := masks(), must("", "nft", "list", "ruleset"); m != beforeMasks || r != beforeRules {
		t.Errorf("after --restore: masks %q ruleset\n%s\nwant %q and\n%s", m, r, beforeMasks, beforeRules)
	}
	if out := must("", bin, "doctor", "--restore", "--state-dir", state); !strings.Contains(out, "nothing to restore") {
		t.Errorf("second restore said:\n%s", out)
	}
}

// doctorJSON is `doctor --json`.
type doctorJSON struct {
	Fixed []doctor.Applied `json:"fixed"`
	doctor.Report
}
