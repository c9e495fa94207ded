//go:build linux && traffic

package e2e

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/linerate/linerate/topology"
)

// unitFile is the agent's systemd unit the package installs.
const unitFile = "../../../../packaging/linerate-agent.service"

// unitSettings are the unit file's Key=Value lines, each key's values in
// order (a key given twice, such as ExecStartPre, has two).
func unitSettings(t testing.TB, path string) map[string][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string][]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, "[") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			t.Fatalf("%s: a line that is no Key=Value: %q", path, line)
		}
		out[k] = append(out[k], v)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// one is the single value of key in the unit.
func one(t testing.TB, s map[string][]string, key string) string {
	t.Helper()
	if len(s[key]) != 1 {
		t.Fatalf("the unit's %s: %q, want one value", key, s[key])
	}
	return s[key][0]
}

// The unit agrees with the agent: its binary where the package puts it,
// its state directory the agent's default --state-dir (where the journal
// restore at start looks), systemd's stop timeout longer than the agent's
// own --shutdown-timeout, restarted on failure.
func TestUnitMatchesAgent(t *testing.T) {
	s := unitSettings(t, unitFile)
	if got := strings.Fields(one(t, s, "ExecStart")); len(got) < 2 || got[0] != "/usr/bin/linerate" || got[1] != "agent" {
		t.Errorf("ExecStart=%s, want /usr/bin/linerate agent", strings.Join(got, " "))
	}
	nfpm, err := os.ReadFile("../../../../packaging/nfpm.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(nfpm), "dst: /usr/bin/linerate\n") || !strings.Contains(string(nfpm), "dst: /lib/systemd/system/linerate-agent.service\n") {
		t.Errorf("packaging/nfpm.yaml does not install the binary as /usr/bin/linerate and the unit as /lib/systemd/system/linerate-agent.service")
	}
	if got := "/var/lib/" + one(t, s, "StateDirectory"); got != topology.DefaultStateDir {
		t.Errorf("StateDirectory is %s, the agent's default --state-dir %s", got, topology.DefaultStateDir)
	}
	if got := one(t, s, "Restart"); got != "on-failure" {
		t.Errorf("Restart=%s, want on-failure", got)
	}
	if got := one(t, s, "KillSignal"); got != "SIGTERM" {
		t.Errorf("KillSignal=%s, want SIGTERM (the agent's clean stop)", got)
	}
	stop, err := time.ParseDuration(one(t, s, "TimeoutStopSec"))
	if err != nil {
		t.Fatalf("TimeoutStopSec: %v", err)
	}
	_, help := linerateOut(t, "agent", "--help")
	m := regexp.MustCompile(`--shutdown-timeout duration .*\(default (\S+)\)`).FindStringSubmatch(help)
	if m == nil {
		t.Fatalf("no --shutdown-timeout default in linerate agent --help:\n%s", help)
	}
	agentStop, err := time.ParseDuration(m[1])
	if err != nil {
		t.Fatal(err)
	}
	if stop <= agentStop {
		t.Errorf("TimeoutStopSec=%s is not longer than the agent's --shutdown-timeout %s: systemd would SIGKILL an agent still restoring", stop, agentStop)
	}
}

// linerateOut runs the built binary and returns its exit code and stdout.
func linerateOut(t testing.TB, args ...string) (int, string) {
	t.Helper()
	out, err := exec.Command(Binary(t), args...).Output()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, string(out)
}

// systemd-analyze verify finds nothing to say about the unit (it exits 0
// on warnings, so any output fails), in a root holding the built binary
// at the unit's ExecStart and this machine's systemd units; the same unit
// with an unknown key or without its binary is reported, so the check
// bites. Skipped where systemd-analyze is absent, failed in CI.
func TestUnitVerify(t *testing.T) {
	requireTool(t, "systemd-analyze", "Debian's systemd package provides it")
	bin := Binary(t)
	root := t.TempDir()
	verify := func(unit string, withBinary bool) string {
		t.Helper()
		r := filepath.Join(root, strings.ReplaceAll(t.Name(), "/", "_")+time.Now().Format("150405.000000000"))
		for _, d := range []string{"usr/bin", "etc/systemd/system", "lib/systemd"} {
			if err := os.MkdirAll(filepath.Join(r, d), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		if out, err := exec.Command("cp", "-a", "/lib/systemd/system", filepath.Join(r, "lib/systemd/")).CombinedOutput(); err != nil {
			t.Fatalf("copy this machine's systemd units: %v: %s", err, out)
		}
		if withBinary {
			if out, err := exec.Command("cp", bin, filepath.Join(r, "usr/bin/linerate")).CombinedOutput(); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
		}
		if err := os.WriteFile(filepath.Join(r, "etc/systemd/system/linerate-agent.service"), []byte(unit), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command("systemd-analyze", "verify", "--man=no", "--root="+r, "/etc/systemd/system/linerate-agent.service").CombinedOutput()
		if err != nil && len(out) == 0 {
			t.Fatalf("systemd-analyze verify: %v and no output", err)
		}
		return string(out)
	}
	unit, err := os.ReadFile(unitFile)
	if err != nil {
		t.Fatal(err)
	}
	if out := verify(string(unit), true); out != "" {
		t.Errorf("systemd-analyze verify of %s:\n%s", unitFile, out)
	}
	if out := verify(string(unit)+"Bogus=1\n", true); !strings.Contains(out, "Unknown key 'Bogus'") {
		t.Errorf("an unknown key was not reported: %q", out)
	}
	if out := verify(string(unit), false); !strings.Contains(out, "/usr/bin/linerate is not executable") {
		t.Errorf("a missing binary was not reported: %q", out)
	}
}
