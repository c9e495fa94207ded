package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/linerate/linerate/internal/cluster/gossip"
	"github.com/linerate/linerate/internal/cluster/mtls"
)

// certs init writes the gossip key beside the CA, mode 0600, as
// --gossip-key reads it; a second init refuses to replace it; certs
// gossip-key adds one to a directory that has none.
func TestCertsInitWritesGossipKey(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tls")
	code, out, errOut := linerate(t, "certs", "init", "--dir", dir)
	if code != 0 {
		t.Fatalf("init: exit %d: %s", code, errOut)
	}
	p := filepath.Join(dir, gossip.KeyFile)
	if !strings.Contains(out, "wrote "+p) {
		t.Errorf("init output does not name %s:\n%s", p, out)
	}
	if m := perm(t, p); m != 0o600 {
		t.Errorf("%s mode %v, want 0600", p, m)
	}
	key, err := gossip.ReadKey(p)
	if err != nil || len(key) != 32 {
		t.Fatalf("the key init wrote: %d bytes, %v; want 32 (AES-256)", len(key), err)
	}
	if code, _, errOut := linerate(t, "certs", "init", "--dir", dir); code == 0 || !strings.Contains(errOut, "--force") {
		t.Errorf("a second init: exit %d, %q; want a refusal naming --force", code, errOut)
	}
	if again, _ := gossip.ReadKey(p); string(again) != string(key) {
		t.Error("a refused init replaced the gossip key")
	}

	old := filepath.Join(t.TempDir(), "old")
	if _, _, err := mtls.Init(old, mtls.CAOptions{}, false); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = linerate(t, "certs", "gossip-key", "--dir", old)
	if code != 0 || !strings.Contains(out, "wrote "+filepath.Join(old, gossip.KeyFile)) || perm(t, filepath.Join(old, gossip.KeyFile)) != 0o600 {
		t.Fatalf("gossip-key: exit %d, %q %q", code, out, errOut)
	}
	if code, _, errOut := linerate(t, "certs", "gossip-key", "--dir", old); code == 0 || !strings.Contains(errOut, "file already exists") {
		t.Errorf("gossip-key over an existing key: exit %d, %q; want a refusal", code, errOut)
	}
	if code, _, errOut := linerate(t, "certs", "gossip-key", "--dir", filepath.Join(old, "nope")); code != 2 || !strings.Contains(errOut, "not a directory") {
		t.Errorf("gossip-key into a missing directory: exit %d, %q", code, errOut)
	}
}

// An agent without a gossip key refuses to start (exit 2, naming
// --gossip-key, --insecure-gossip and certs init), the host unchanged;
// one given --tls-dir finds the key certs init wrote there and gossips
// encrypted; --insecure-gossip starts and warns.
func TestAgentGossipKeyRequired(t *testing.T) {
	root, state := host(t), t.TempDir()
	sum := treeSum(t, root)
	base := []string{"--role", "receiver", "--iface", "eth0", "--root", root, "--state-dir", state, "--grpc", "127.0.0.1:0", "--bind", "127.0.0.1:0", "--name", "t1"}
	code, _, errOut := linerate(t, append([]string{"agent", "--insecure"}, base...)...)
	for _, want := range []string{"no gossip key", "--gossip-key", "--insecure-gossip", "linerate certs init"} {
		if code != 2 || !strings.Contains(errOut, want) {
			t.Errorf("agent without a key: exit %d, stderr %q; want 2 and %q", code, errOut, want)
		}
	}
	if treeSum(t, root) != sum {
		t.Error("a refused agent changed the host")
	}

	tls := t.TempDir()
	if _, _, err := mtls.Init(tls, mtls.CAOptions{}, true); err != nil {
		t.Fatal(err)
	}
	if _, _, err := mtls.Issue(tls, mtls.LeafOptions{Name: "t1", Role: mtls.RoleAgent}, false); err != nil {
		t.Fatal(err)
	}
	// As on a real host, no CA key beside the served certificates.
	if err := os.Remove(filepath.Join(tls, mtls.CAKeyFile)); err != nil {
		t.Fatal(err)
	}
	code, _, errOut = linerate(t, append([]string{"agent", "--tls-dir", tls}, base...)...)
	if code != 2 || !strings.Contains(errOut, "no gossip.key in --tls-dir "+tls) {
		t.Errorf("agent with a certificate directory but no key: exit %d, stderr %q", code, errOut)
	}
	if _, err := gossip.InitKey(tls, false); err != nil {
		t.Fatal(err)
	}
	stderr, stop := startAgent(t, "gossip started", append([]string{"--tls-dir", tls}, base...)...)
	if !strings.Contains(stderr.String(), "encrypted=true") || strings.Contains(stderr.String(), gossip.InsecureWarning) {
		t.Errorf("the agent did not gossip with --tls-dir's key:\n%s", stderr.String())
	}
	if code := stop(); code != 0 {
		t.Errorf("exit %d:\n%s", code, stderr.String())
	}

	stderr, stop = startAgent(t, "gossip started", append([]string{"--insecure", "--insecure-gossip"}, base...)...)
	if !strings.Contains(stderr.String(), "[WARN]  linerate.agent: "+gossip.InsecureWarning) || !strings.Contains(stderr.String(), "encrypted=false") {
		t.Errorf("--insecure-gossip did not warn:\n%s", stderr.String())
	}
	if code := stop(); code != 0 {
		t.Errorf("exit %d:\n%s", code, stderr.String())
	}
	if err := os.Remove(filepath.Join(tls, gossip.KeyFile)); err != nil {
		t.Fatal(err)
	}
}

// A coordinator told --insecure-gossip gossips in plaintext and warns
// (here before its join of a seed that is down fails).
func TestCoordinatorInsecureGossipWarns(t *testing.T) {
	code, _, errOut := linerate(t, "members", "--join", "127.0.0.1:1", "--bind", "127.0.0.1:0", "--join-timeout", "1s", "--insecure", "--insecure-gossip")
	if code == 0 || !strings.Contains(errOut, "[WARN]  linerate.cluster: "+gossip.InsecureWarning) {
		t.Errorf("exit %d, stderr %q; want the insecure-gossip warning", code, errOut)
	}
}
