package main

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/linerate/linerate/internal/cluster/mtls"
)

// badCommandInputs are command lines the coordinator's and the lab's
// commands refuse before they touch anything, with exit 2 and what the
// stderr names; the reliability suite runs them too, as root, comparing
// the host before and after (TestReliabilityBadInput).
var badCommandInputs = []struct {
	args []string
	want string
}{
	{[]string{"lab", "run", "--name", "x/../../..", "--count", "10"}, `lab name "x/../../..": 1-20 letters, digits`},
	{[]string{"lab", "down", "--name", "x/../../etc"}, `--name: lab name "x/../../etc"`},
	{[]string{"lab", "down"}, "give --name NAME or --all"},
	{[]string{"lab", "run", "--loss-every", "1"}, "--loss-every 1: would drop every packet"},
	{[]string{"lab", "run", "--loss", "101"}, "--loss 101: want a percentage"},
	{[]string{"lab", "run", "--shape", "5bit"}, `--shape "5bit": 5 bit/s: want 8kbit to 400gbit`},
	{[]string{"lab", "run", "--shape", "fast"}, `--shape "fast"`},
	{[]string{"lab", "run", "--name", "abcdefghijkl"}, "at most 11 characters with a management network"},
	{[]string{"lab", "run", "--senders", "0"}, "0 senders and 2 receivers: want at least one of each"},
	{[]string{"lab", "run", "--queues", "65"}, "--queues 65: want 1-64"},
	{[]string{"lab", "run", "--hosts", "xen"}, `--hosts "xen": want netns (network namespaces) or vm (qemu guests)`},
	{[]string{"lab", "run", "--vcpus", "8"}, "--vcpus 8: only VM hosts have vCPUs (--hosts vm)"},
	{[]string{"lab", "run", "--hosts", "vm", "--vcpus", "3"}, "--vcpus 3"},
	{[]string{"lab", "run", "--hosts", "vm", "--vcpus", "4", "--queues", "8"}, "--queues 8"},
	{[]string{"lab", "up", "--hosts", "vm", "--senders", "10", "--receivers", "7"}, "17 VM hosts: at most 16"},
	{[]string{"lab", "campaign", "--sizes", "40"}, "frame_sizes[0]: 40: want 64-9018 bytes"},
	{[]string{"run", "--senders", "a", "--receivers", "b"}, "neither a duration nor a count"},
	{[]string{"members"}, "--join: give the gossip address"},
	{[]string{"run", "--html", "/nonexistent/r.html", "--count", "1"}, "--html /nonexistent/r.html: directory /nonexistent does not exist"},
	{[]string{"lab", "run", "--html", "/nonexistent/r.html"}, "directory /nonexistent does not exist"},
	{[]string{"lab", "campaign", "--html", "/nonexistent/r.html"}, "directory /nonexistent does not exist"},
	{[]string{"campaign", "run", "spec.yaml", "--html", "/nonexistent/r.html"}, "directory /nonexistent does not exist"},
	// The agent's rails: an --allow-dst covering everything only with
	// --allow-dst-any, VLANs and source MACs well formed.
	{[]string{"agent", "--role", "sender", "--iface", "lo", "--insecure", "--bind", "", "--allow-dst", "0.0.0.0/0"},
		"--allow-dst 0.0.0.0/0: a prefix shorter than /8 covers so much that a sender could flood any host"},
	{[]string{"agent", "--role", "sender", "--iface", "lo", "--insecure", "--bind", "", "--allow-dst", "198.18.0.0/15,::/0"}, "add --allow-dst-any to allow it anyway"},
	{[]string{"agent", "--role", "sender", "--iface", "lo", "--insecure", "--bind", "", "--allow-vlan", "4096"}, `--allow-vlan: "4096": want a VLAN id 0-4095 or a range`},
	{[]string{"agent", "--role", "sender", "--iface", "lo", "--insecure", "--bind", "", "--allow-vlan", "200-100"}, `--allow-vlan: "200-100"`},
	{[]string{"agent", "--role", "sender", "--iface", "lo", "--insecure", "--bind", "", "--allow-vlan", "ten"}, `--allow-vlan: "ten"`},
	{[]string{"agent", "--role", "sender", "--iface", "lo", "--insecure", "--bind", "", "--allow-src-mac", "02:00:00:00:00"}, `--allow-src-mac: "02:00:00:00:00": want a MAC`},
	{[]string{"agent", "--role", "sender", "--iface", "lo", "--insecure", "--bind", "", "--allow-src-mac", "ff:ff:ff:ff:ff:ff"}, "--allow-src-mac ff:ff:ff:ff:ff:ff: a group MAC"},
	{[]string{"agent", "--role", "receiver", "--iface", "lo", "--insecure", "--max-run", "0s"}, "--max-run 0s: want a positive duration such as 24h"},
	{[]string{"agent", "--role", "receiver", "--iface", "lo", "--insecure", "--max-run", "-1h"}, "--max-run -1h0m0s: want a positive duration"},
}

// The coordinator's and the lab's commands refuse bad input before they
// touch anything, with exit 2 and the input named; none of these needs
// root, so they run everywhere.
func TestCommandsBadInput(t *testing.T) {
	for _, tc := range badCommandInputs {
		code, _, errOut := linerate(t, tc.args...)
		if code != 2 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stderr %q (want 2 and %q)", tc.args, code, errOut, tc.want)
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
