//go:build linux && traffic

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/linerate/linerate/coordinator"
)

// TestBootstrapBundle follows the README's bootstrap on loopback: `certs
// init`, then `certs issue --bundle` for an agent and a coordinator; each
// bundle's .tar.gz unpacked with tar as into /etc/linerate (here a
// temporary directory, so the files' tls-dir is rewritten to it), the
// agent's file given what only its host knows (role, iface, addresses).
// The agent, started with --config alone, passes the certificate
// directory guard (no --allow-ca-key: the bundle has no ca.key) and
// `members --config` with the coordinator's bundle lists it, serving.
func TestBootstrapBundle(t *testing.T) {
	bin := Binary(t)
	pid := syscall.Getpid()
	seed := fmt.Sprintf("127.%d.%d.3:7946", pid>>8&255, pid&255)
	ca, out := filepath.Join(t.TempDir(), "ca"), t.TempDir()
	for _, args := range [][]string{
		{"certs", "init", "--dir", ca},
		{"certs", "issue", "--dir", ca, "--name", "a1", "--role", "agent", "--host", "127.0.0.1", "--bundle", out, "--join", seed},
		{"certs", "issue", "--dir", ca, "--name", "coord", "--role", "coordinator", "--bundle", out, "--join", seed},
	} {
		if b, err := exec.Command(bin, args...).CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, b)
		}
	}
	unpack := func(name, config, extra string) string {
		etc := filepath.Join(t.TempDir(), "etc-linerate")
		if err := os.Mkdir(etc, 0o755); err != nil {
			t.Fatal(err)
		}
		if b, err := exec.Command("tar", "-xzf", filepath.Join(out, name+".tar.gz"), "-C", etc).CombinedOutput(); err != nil {
			t.Fatalf("unpack %s's bundle: %v\n%s", name, err, b)
		}
		if _, err := os.Stat(filepath.Join(etc, "tls", "ca.key")); err == nil {
			t.Fatalf("%s's bundle holds ca.key", name)
		}
		p := filepath.Join(etc, config)
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		text := strings.Replace(string(b), "tls-dir: /etc/linerate/tls\n", "tls-dir: "+filepath.Join(etc, "tls")+"\n", 1)
		if text == string(b) {
			t.Fatalf("%s holds no tls-dir /etc/linerate/tls:\n%s", p, b)
		}
		if err := os.WriteFile(p, []byte(text+extra), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	agentYAML := unpack("a1", "agent.yaml", fmt.Sprintf("role: receiver\niface: lo\nallow-mgmt-iface: true\nbind: %s\ngrpc: 127.0.0.1:0\nstate-dir: %s\nlog-level: warn\n", seed, t.TempDir()))
	coordYAML := unpack("coord", "coordinator.yaml", "bind: 127.0.0.1:0\njoin-timeout: 30s\n")

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	log := startAgentProcess(t, bin, "a1", "agent", "--config", agentYAML)
	members := exec.CommandContext(ctx, bin, "members", "--config", coordYAML, "--json", "--wait", "1", "--timeout", "30s")
	var stdout, stderr strings.Builder
	members.Stdout, members.Stderr = &stdout, &stderr
	if err := members.Run(); err != nil {
		t.Fatalf("members --config %s: %v\n%s\nagent:\n%s", coordYAML, err, stderr.String(), log.String())
	}
	var ms []coordinator.Member
	if err := json.Unmarshal([]byte(stdout.String()), &ms); err != nil {
		t.Fatalf("members JSON: %v\n%s", err, stdout.String())
	}
	if len(ms) != 1 || ms[0].Name != "a1" || ms[0].Health != "serving" || ms[0].Role != "receiver" {
		t.Errorf("members: %+v\n%s\nagent:\n%s", ms, stderr.String(), log.String())
	}
	if strings.Contains(log.String(), "[WARN]") || strings.Contains(stderr.String(), "[WARN]") {
		t.Errorf("a warning from a bootstrapped agent or coordinator:\nagent:\n%s\nmembers:\n%s", log.String(), stderr.String())
	}
}
