package main

import (
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/linerate/linerate/internal/cluster/mtls"
)

func readCert(t *testing.T, path string) *x509.Certificate {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(b)
	if block == nil {
		t.Fatalf("%s: no PEM", path)
	}
	c, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func perm(t *testing.T, path string) os.FileMode {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Mode().Perm()
}

func TestCertsInitAndIssue(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tls")
	code, out, errOut := linerate(t, "certs", "init", "--dir", dir)
	if code != 0 {
		t.Fatalf("init: exit %d: %s", code, errOut)
	}
	for _, f := range []string{"ca.crt", "ca.key"} {
		if !strings.Contains(out, "wrote "+filepath.Join(dir, f)) {
			t.Errorf("init output does not name %s:\n%s", f, out)
		}
	}
	if m := perm(t, filepath.Join(dir, "ca.key")); m != 0o600 {
		t.Errorf("ca.key mode %v, want 0600", m)
	}
	if m := perm(t, filepath.Join(dir, "ca.crt")); m != 0o644 {
		t.Errorf("ca.crt mode %v, want 0644", m)
	}
	if m := perm(t, dir); m != 0o700 {
		t.Errorf("directory mode %v, want 0700", m)
	}
	ca := readCert(t, filepath.Join(dir, "ca.crt"))
	if !ca.IsCA || time.Until(ca.NotAfter) < 9*365*24*time.Hour {
		t.Errorf("CA: IsCA %v, valid until %v (want about 10 years)", ca.IsCA, ca.NotAfter)
	}

	code, out, errOut = linerate(t, "certs", "issue", "--dir", dir, "--name", "sender-1", "--role", "agent", "--host", "198.18.0.2,sender-1.lab")
	if code != 0 {
		t.Fatalf("issue: exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "sender-1, sender-1.lab, 198.18.0.2") {
		t.Errorf("issue output does not list the names:\n%s", out)
	}
	if m := perm(t, filepath.Join(dir, "sender-1.key")); m != 0o600 {
		t.Errorf("sender-1.key mode %v, want 0600", m)
	}
	leaf := readCert(t, filepath.Join(dir, "sender-1.crt"))
	if err := leaf.CheckSignatureFrom(ca); err != nil {
		t.Errorf("sender-1.crt not signed by ca.crt: %v", err)
	}
	if !slices.Contains(leaf.ExtKeyUsage, x509.ExtKeyUsageServerAuth) || !slices.Contains(leaf.ExtKeyUsage, x509.ExtKeyUsageClientAuth) {
		t.Errorf("EKUs %v, want server and client auth", leaf.ExtKeyUsage)
	}
	if r, err := mtls.RoleOf(leaf); err != nil || r != mtls.RoleAgent {
		t.Errorf("role %q, %v", r, err)
	}
	if len(leaf.IPAddresses) != 1 || leaf.IPAddresses[0].String() != "198.18.0.2" {
		t.Errorf("IP SANs %v", leaf.IPAddresses)
	}

	if code, _, errOut := linerate(t, "certs", "issue", "--dir", dir, "--name", "coord", "--role", "coordinator"); code != 0 {
		t.Fatalf("issue coordinator: exit %d: %s", code, errOut)
	}
	// What was written is what the servers load.
	if _, err := mtls.ServerTLS(dir, "sender-1"); err != nil {
		t.Errorf("ServerTLS: %v", err)
	}
	if _, err := mtls.ClientTLS(dir, "coord", "sender-1"); err != nil {
		t.Errorf("ClientTLS: %v", err)
	}
}

func TestCertsRefuseToOverwrite(t *testing.T) {
	dir := t.TempDir()
	if code, _, errOut := linerate(t, "certs", "init", "--dir", dir); code != 0 {
		t.Fatalf("init: %s", errOut)
	}
	if code, _, errOut := linerate(t, "certs", "issue", "--dir", dir, "--name", "a1", "--role", "agent"); code != 0 {
		t.Fatalf("issue: %s", errOut)
	}
	snapshot := func() map[string][]byte {
		m := map[string][]byte{}
		for _, f := range []string{"ca.crt", "ca.key", "a1.crt", "a1.key"} {
			b, err := os.ReadFile(filepath.Join(dir, f))
			if err != nil {
				t.Fatal(err)
			}
			m[f] = b
		}
		return m
	}
	before := snapshot()
	for _, args := range [][]string{
		{"certs", "init", "--dir", dir},
		{"certs", "issue", "--dir", dir, "--name", "a1", "--role", "agent"},
	} {
		code, out, errOut := linerate(t, args...)
		if code != 1 || !strings.Contains(errOut, "file exists") || !strings.Contains(errOut, "--force") {
			t.Errorf("%v: exit %d, stderr %q; want 1 naming the file and --force", args, code, errOut)
		}
		if out != "" {
			t.Errorf("%v printed %q", args, out)
		}
	}
	after := snapshot()
	for f := range before {
		if !bytes.Equal(before[f], after[f]) {
			t.Errorf("a refused command changed %s", f)
		}
	}

	if code, _, errOut := linerate(t, "certs", "issue", "--dir", dir, "--name", "a1", "--role", "agent", "--force"); code != 0 {
		t.Fatalf("issue --force: %s", errOut)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "a1.key")); bytes.Equal(b, before["a1.key"]) {
		t.Error("issue --force kept the old key")
	}
	if m := perm(t, filepath.Join(dir, "a1.key")); m != 0o600 {
		t.Errorf("replaced a1.key mode %v", m)
	}
	code, _, errOut := linerate(t, "certs", "init", "--dir", dir, "--force")
	if code != 0 {
		t.Fatalf("init --force: %s", errOut)
	}
	if !strings.Contains(errOut, "no longer verify") {
		t.Errorf("init --force does not warn that old certificates stop verifying: %q", errOut)
	}
	if _, err := mtls.Load(dir, "a1"); err == nil {
		t.Error("a1 still loads against the replaced CA")
	}
}

func TestCertsBadInput(t *testing.T) {
	dir := t.TempDir()
	if code, _, errOut := linerate(t, "certs", "init", "--dir", dir); code != 0 {
		t.Fatalf("init: %s", errOut)
	}
	for _, tc := range []struct {
		args []string
		says []string
	}{
		{[]string{"certs", "issue", "--dir", dir, "--name", "x", "--role", "admin"}, []string{`--role: role "admin"`, "valid roles are agent and coordinator"}},
		{[]string{"certs", "issue", "--dir", dir, "--name", "x"}, []string{`role ""`, "agent and coordinator"}},
		{[]string{"certs", "issue", "--dir", dir, "--role", "agent"}, []string{"--name: required"}},
		{[]string{"certs", "issue", "--dir", dir, "--name", "../evil", "--role", "agent"}, []string{`--name: name "../evil"`}},
		{[]string{"certs", "issue", "--dir", dir, "--name", "ca", "--role", "agent"}, []string{"CA's own file name"}},
		{[]string{"certs", "issue", "--dir", dir, "--name", "x", "--role", "agent", "--host", "a b"}, []string{`host "a b"`}},
		{[]string{"certs", "issue", "--name", "x", "--role", "agent"}, []string{"--dir: required"}},
		{[]string{"certs", "init"}, []string{"--dir: required"}},
		{[]string{"certs", "init", "--dir", dir, "--days", "0"}, []string{"--days 0"}},
		{[]string{"certs", "rotate"}, []string{`unknown command "rotate"`, "init, issue, renew, revoke"}},
		// An agent's name is what the coordinator verifies its certificate
		// against: it must be a DNS name.
		{[]string{"certs", "issue", "--dir", dir, "--name", "sender_1", "--role", "agent"}, []string{`agent name "sender_1" is not a DNS name`, "no '_'", `e.g. "sender-1"`}},
		{[]string{"certs", "issue", "--dir", dir, "--name", "-x", "--role", "agent"}, []string{`name "-x"`}},
		{[]string{"certs", "renew", "--dir", dir}, []string{"give the NAME of one certificate to renew"}},
		{[]string{"certs", "renew", "--dir", dir, "a", "b"}, []string{"got 2 arguments"}},
		{[]string{"certs", "renew", "--dir", dir, "nosuch"}, []string{"renew \"nosuch\"", "nosuch.crt", "certs issue"}},
		{[]string{"certs", "renew", "--dir", dir, "nosuch", "--days", "-1"}, []string{"--days -1"}},
		{[]string{"certs", "renew", "nosuch"}, []string{"--dir: required"}},
		{[]string{"certs", "revoke", "--dir", dir}, []string{"at least one certificate to revoke"}},
		{[]string{"certs", "revoke", "--dir", dir, "nosuch"}, []string{`revoke "nosuch"`, "nosuch.crt", "not a serial"}},
		{[]string{"certs", "revoke", "a1"}, []string{"--dir: required"}},
	} {
		code, out, errOut := linerate(t, tc.args...)
		if code != 2 {
			t.Errorf("%v: exit %d, want 2 (stderr %q)", tc.args, code, errOut)
		}
		for _, s := range tc.says {
			if !strings.Contains(errOut, s) {
				t.Errorf("%v: stderr %q does not say %q", tc.args, errOut, s)
			}
		}
		if out != "" {
			t.Errorf("%v printed %q", tc.args, out)
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 3 {
		t.Errorf("bad input left %d files in the directory, want the CA's 2 and the gossip key", len(entries))
	}
}

func TestCertsIssueWithoutCA(t *testing.T) {
	dir := t.TempDir()
	code, _, errOut := linerate(t, "certs", "issue", "--dir", dir, "--name", "a", "--role", "agent")
	if code != 1 || !strings.Contains(errOut, "linerate certs init --dir "+dir) {
		t.Errorf("exit %d, stderr %q; want 1 pointing at certs init", code, errOut)
	}
}

func TestCertsRenewAndRevoke(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"certs", "init", "--dir", dir},
		{"certs", "issue", "--dir", dir, "--name", "a1", "--role", "agent", "--host", "198.18.0.2"},
		{"certs", "issue", "--dir", dir, "--name", "c1", "--role", "coordinator"},
		{"certs", "issue", "--dir", dir, "--name", "c2", "--role", "coordinator"},
	} {
		if code, _, errOut := linerate(t, args...); code != 0 {
			t.Fatalf("%v: %s", args, errOut)
		}
	}
	ca := readCert(t, filepath.Join(dir, "ca.crt"))
	old := readCert(t, filepath.Join(dir, "a1.crt"))
	oldKey, _ := os.ReadFile(filepath.Join(dir, "a1.key"))
	if got := time.Until(old.NotAfter); got < 89*24*time.Hour || got > 91*24*time.Hour {
		t.Errorf("default leaf validity %v, want 90 days", got)
	}

	code, out, errOut := linerate(t, "certs", "renew", "--dir", dir, "a1", "--revoke-old")
	if code != 0 {
		t.Fatalf("renew: exit %d: %s", code, errOut)
	}
	renewed := readCert(t, filepath.Join(dir, "a1.crt"))
	if renewed.SerialNumber.Cmp(old.SerialNumber) == 0 {
		t.Error("renew kept the serial")
	}
	if !slices.Equal(renewed.DNSNames, old.DNSNames) || len(renewed.IPAddresses) != 1 || !renewed.IPAddresses[0].Equal(old.IPAddresses[0]) {
		t.Errorf("renewed SANs %v %v, want %v %v", renewed.DNSNames, renewed.IPAddresses, old.DNSNames, old.IPAddresses)
	}
	if r, err := mtls.RoleOf(renewed); err != nil || r != mtls.RoleAgent {
		t.Errorf("renewed role %q, %v", r, err)
	}
	if k, _ := os.ReadFile(filepath.Join(dir, "a1.key")); bytes.Equal(k, oldKey) {
		t.Error("renew kept the key")
	}
	if m := perm(t, filepath.Join(dir, "a1.key")); m != 0o600 {
		t.Errorf("renewed key mode %v", m)
	}
	for _, want := range []string{"serial " + mtls.Serial(renewed.SerialNumber), "revoked the old certificate (serial " + mtls.Serial(old.SerialNumber), "ca.crl"} {
		if !strings.Contains(out, want) {
			t.Errorf("renew output does not say %q:\n%s", want, out)
		}
	}

	c1 := readCert(t, filepath.Join(dir, "c1.crt")).SerialNumber
	c2 := readCert(t, filepath.Join(dir, "c2.crt")).SerialNumber
	code, out, errOut = linerate(t, "certs", "revoke", "--dir", dir, "c1")
	if code != 0 || !strings.Contains(out, `revoked "c1" (serial `+mtls.Serial(c1)+")") || !strings.Contains(out, "SIGHUP") {
		t.Fatalf("revoke c1: exit %d, out %q, stderr %q", code, out, errOut)
	}
	// Again, and by serial as openssl prints it (colons): nothing new.
	withColons := strings.ToUpper(c1.Text(16))
	withColons = withColons[:2] + ":" + withColons[2:]
	code, out, errOut = linerate(t, "certs", "revoke", "--dir", dir, withColons)
	if code != 0 || !strings.Contains(out, "was revoked already") {
		t.Errorf("revoke again: exit %d, out %q, stderr %q", code, out, errOut)
	}
	list, err := mtls.LoadRevocations(dir, ca)
	if err != nil {
		t.Fatal(err)
	}
	if !list.Revoked(c1) || !list.Revoked(old.SerialNumber) || list.Revoked(c2) || list.Revoked(renewed.SerialNumber) || list.Len() != 2 {
		t.Errorf("ca.crl: c1 %v, old a1 %v, c2 %v, renewed a1 %v, %d entries; want the first two of 2",
			list.Revoked(c1), list.Revoked(old.SerialNumber), list.Revoked(c2), list.Revoked(renewed.SerialNumber), list.Len())
	}
	if m := perm(t, filepath.Join(dir, mtls.CRLFile)); m != 0o644 {
		t.Errorf("ca.crl mode %v, want 0644", m)
	}
}

// A bundle's configuration file is one the agent and the coordinator
// commands load: what it holds, and that an agent given only it says
// the two settings its operator must still add, naming the file.
func TestCertsIssueBundleLoads(t *testing.T) {
	ca := filepath.Join(t.TempDir(), "ca")
	out := filepath.Join(t.TempDir(), "bundles")
	for _, args := range [][]string{
		{"certs", "init", "--dir", ca},
		{"certs", "issue", "--dir", ca, "--name", "h1", "--role", "agent", "--host", "198.18.0.5", "--bundle", out, "--join", "198.18.0.5:7946", "--join", "198.18.0.6:7946"},
		{"certs", "issue", "--dir", ca, "--name", "coord", "--role", "coordinator", "--bundle", out, "--join", "198.18.0.5:7946"},
	} {
		if code, stdout, stderr := linerate(t, args...); code != 0 {
			t.Fatalf("%v: exit %d: %s%s", args, code, stdout, stderr)
		} else if slices.Contains(args, "--bundle") && !strings.Contains(stdout, "tar -xzf "+args[5]+".tar.gz -C /etc/linerate") {
			t.Errorf("%v: stdout %q does not say how to unpack the bundle", args, stdout)
		}
	}
	agentYAML := filepath.Join(out, "h1", "agent.yaml")
	code, stdout, stderr := linerate(t, "agent", "--config", agentYAML, "--role", "receiver", "--iface", "data0", "--print-config")
	if code != 0 {
		t.Fatalf("agent --config %s: exit %d: %s", agentYAML, code, stderr)
	}
	for _, want := range []string{"name: h1 # " + agentYAML, "tls-dir: /etc/linerate/tls # " + agentYAML, "join: ['198.18.0.5:7946', '198.18.0.6:7946'] # " + agentYAML} {
		if !strings.Contains(stdout, want) {
			t.Errorf("agent's effective configuration:\n%s\nwant %q", stdout, want)
		}
	}
	code, _, stderr = linerate(t, "agent", "--config", agentYAML)
	if want := `required flag(s) "iface", "role" not set: give them on the command line or in ` + agentYAML; code != 2 || !strings.Contains(stderr, want) {
		t.Errorf("agent with the bundle's file alone: exit %d, stderr %q, want 2 and %q", code, stderr, want)
	}
	coordYAML := filepath.Join(out, "coord", "coordinator.yaml")
	code, stdout, stderr = linerate(t, "members", "--config", coordYAML, "--print-config")
	if code != 0 {
		t.Fatalf("members --config %s: exit %d: %s", coordYAML, code, stderr)
	}
	for _, want := range []string{"cert-name: coord # " + coordYAML, "tls-dir: /etc/linerate/tls # " + coordYAML, "join: ['198.18.0.5:7946'] # " + coordYAML} {
		if !strings.Contains(stdout, want) {
			t.Errorf("members' effective configuration:\n%s\nwant %q", stdout, want)
		}
	}
	// --join without --bundle has nowhere to go.
	if code, _, stderr := linerate(t, "certs", "issue", "--dir", ca, "--name", "h2", "--role", "agent", "--join", "a:1"); code != 2 || !strings.Contains(stderr, "--join: only with --bundle") {
		t.Errorf("--join without --bundle: exit %d, %q", code, stderr)
	}
}
