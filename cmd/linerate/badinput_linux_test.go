package main

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/linerate/linerate/cmd/linerate/internal/e2e"
	"github.com/linerate/linerate/internal/cluster/mtls"
)

// The coordinator's and the lab's commands refuse bad input before they
// touch anything, with exit 2 and the input named; none of these needs
// root, so they run everywhere (the list is e2e's: the reliability suite
// runs it against the real binary as root).
func TestCommandsBadInput(t *testing.T) {
	for _, tc := range e2e.BadCommands {
		code, _, errOut := linerate(t, tc.Args...)
		if code != 2 || !strings.Contains(errOut, tc.Want) {
			t.Errorf("%v: exit %d, stderr %q (want 2 and %q)", tc.Args, code, errOut, tc.Want)
		}
	}
}

// dirSum is every file of dir with its mode and contents.
func dirSum(t *testing.T, dir string) string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%s %v %x\n", e.Name(), perm(t, p), sha256.Sum256(data))
	}
	return b.String()
}

// Agents and coordinators refuse a certificate directory that holds the
// CA's key or a key others can read, and a revoked certificate of their
// own, naming the file and the fix; the directory is left as it was.
func TestCertDirBadInput(t *testing.T) {
	h := newCertHosts(t, "90")
	key := filepath.Join(t.TempDir(), "gossip.key")
	if err := os.WriteFile(key, []byte("AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	agentArgs := func(dir string, more ...string) []string {
		return append([]string{"agent", "--role", "receiver", "--iface", "eth0", "--root", host(t), "--state-dir", t.TempDir(),
			"--tls-dir", dir, "--grpc", "127.0.0.1:0", "--bind", "", "--name", "a1", "--gossip-key", key}, more...)
	}
	membersArgs := func(dir string) []string {
		return []string{"members", "--join", "127.0.0.1:1", "--tls-dir", dir, "--cert-name", "c1", "--gossip-key", key}
	}
	withCAKey := t.TempDir()
	h.copy(t, withCAKey, mtls.CACertFile, mtls.CAKeyFile, "a1.crt", "a1.key", "c1.crt", "c1.key")
	caKey := filepath.Join(withCAKey, mtls.CAKeyFile)
	openKeys := t.TempDir()
	h.copy(t, openKeys, mtls.CACertFile, "a1.crt", "a1.key", "c1.crt", "c1.key")
	for _, f := range []string{"a1.key", "c1.key"} {
		if err := os.Chmod(filepath.Join(openKeys, f), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	revoked := t.TempDir()
	if code, _, errOut := linerate(t, "certs", "revoke", "--dir", h.ca, "a1"); code != 0 {
		t.Fatal(errOut)
	}
	h.copy(t, revoked, mtls.CACertFile, mtls.CRLFile, "a1.crt", "a1.key")

	for _, tc := range []struct {
		args []string
		dir  string
		want []string
	}{
		{agentArgs(withCAKey), withCAKey, []string{caKey, "move it off the host", "--allow-ca-key"}},
		{membersArgs(withCAKey), withCAKey, []string{"--tls-dir", caKey, "move it off the host"}},
		{agentArgs(openKeys), openKeys, []string{filepath.Join(openKeys, "a1.key") + " has mode 0644", "chmod 600 " + filepath.Join(openKeys, "a1.key")}},
		{membersArgs(openKeys), openKeys, []string{filepath.Join(openKeys, "c1.key") + " has mode 0644", "chmod 600"}},
		{agentArgs(revoked), revoked, []string{`load "a1": serial`, "is on ca.crl", "certs renew a1"}},
		{[]string{"certs", "issue", "--dir", h.ca, "--name", "recv_1", "--role", "agent"}, h.ca, []string{`agent name "recv_1" is not a DNS name`, `e.g. "recv-1"`}},
	} {
		before := dirSum(t, tc.dir)
		code, _, errOut := linerate(t, tc.args...)
		if code != 2 {
			t.Errorf("%v: exit %d, want 2 (stderr %q)", tc.args, code, errOut)
		}
		for _, w := range tc.want {
			if !strings.Contains(errOut, w) {
				t.Errorf("%v: stderr %q does not say %q", tc.args, errOut, w)
			}
		}
		if dirSum(t, tc.dir) != before {
			t.Errorf("%v changed %s", tc.args, tc.dir)
		}
	}

	// On the CA's own machine the agent may serve beside ca.key.
	stderr, stop := startAgent(t, "serving the Agent service", agentArgs(withCAKey, "--allow-ca-key")[1:]...)
	if code := stop(); code != 0 {
		t.Errorf("--allow-ca-key: exit %d:\n%s", code, stderr.String())
	}
}

// Gossip without a key, and the key's flags given wrong, are refused
// before anything starts (exit 2, the flags named), the host unchanged.
func TestGossipBadInput(t *testing.T) {
	root := host(t)
	sum := treeSum(t, root)
	key := t.TempDir() + "/gossip.key" // no such file
	agent := []string{"agent", "--role", "receiver", "--iface", "eth0", "--root", root, "--state-dir", t.TempDir(), "--grpc", "127.0.0.1:0", "--bind", "127.0.0.1:0"}
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{append(agent, "--insecure"), []string{"no gossip key", "--gossip-key FILE", "--insecure-gossip", "linerate certs init"}},
		{append(agent, "--insecure", "--insecure-gossip", "--gossip-key", key), []string{"give one of --gossip-key " + key + " and --insecure-gossip"}},
		{append(agent, "--insecure", "--gossip-key", key), []string{"--gossip-key: gossip key: open " + key}},
		{[]string{"members", "--join", "127.0.0.1:1", "--insecure"}, []string{"no gossip key", "--insecure-gossip"}},
		{[]string{"run", "--join", "127.0.0.1:1", "--insecure", "--senders", "a", "--receivers", "b", "--count", "1"}, []string{"no gossip key", "--gossip-key FILE"}},
		{[]string{"certs", "gossip-key"}, []string{"--dir: required"}},
	} {
		code, _, errOut := linerate(t, tc.args...)
		for _, w := range tc.want {
			if code != 2 || !strings.Contains(errOut, w) {
				t.Errorf("%v: exit %d, stderr %q (want 2 and %q)", tc.args, code, errOut, w)
			}
		}
	}
	if treeSum(t, root) != sum {
		t.Error("a refused agent changed the host")
	}
}
