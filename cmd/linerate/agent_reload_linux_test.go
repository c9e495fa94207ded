package main

import (
	"context"
	"math/big"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/peer"

	"github.com/linerate/linerate/internal/cluster/mtls"
	lineratev1 "github.com/linerate/linerate/proto/linerate/v1"
)

// certHosts is a CA machine (ca: ca.key and every certificate, as
// `linerate certs` writes them) and what is copied to an agent host
// (agent) and a coordinator host (coord): ca.crt and the host's pairs.
type certHosts struct{ ca, agent, coord string }

func newCertHosts(t *testing.T, agentDays string) certHosts {
	t.Helper()
	h := certHosts{ca: t.TempDir(), agent: t.TempDir(), coord: t.TempDir()}
	for _, args := range [][]string{
		{"certs", "init", "--dir", h.ca},
		{"certs", "issue", "--dir", h.ca, "--name", "a1", "--role", "agent", "--days", agentDays},
		{"certs", "issue", "--dir", h.ca, "--name", "c1", "--role", "coordinator"},
		{"certs", "issue", "--dir", h.ca, "--name", "c2", "--role", "coordinator"},
	} {
		if code, _, errOut := linerate(t, args...); code != 0 {
			t.Fatalf("%v: %s", args, errOut)
		}
	}
	h.copy(t, h.agent, mtls.CACertFile, "a1.crt", "a1.key")
	h.copy(t, h.coord, mtls.CACertFile, "c1.crt", "c1.key", "c2.crt", "c2.key")
	return h
}

// copy copies files from the CA machine to dir, keeping their modes.
func (h certHosts) copy(t *testing.T, dir string, files ...string) {
	t.Helper()
	for _, f := range files {
		src := filepath.Join(h.ca, f)
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, perm(t, src)); err != nil {
			t.Fatal(err)
		}
	}
}

// describeAs dials addr anew as the coordinator certificate name and
// returns the serial of the agent's certificate.
func describeAs(t *testing.T, creds credentials.TransportCredentials, addr string) (*big.Int, error) {
	t.Helper()
	conn, err := grpc.NewClient(addr, mtls.DialOptions(creds)...)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var p peer.Peer
	if _, err := lineratev1.NewAgentClient(conn).Describe(ctx, &lineratev1.DescribeRequest{}, grpc.Peer(&p)); err != nil {
		return nil, err
	}
	return p.AuthInfo.(credentials.TLSInfo).State.PeerCertificates[0].SerialNumber, nil
}

func waitLog(t *testing.T, log *syncBuffer, s string, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for strings.Count(log.String(), s) < n {
		if time.Now().After(deadline) {
			t.Fatalf("no %q (×%d) in the agent's log:\n%s", s, n, log.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestAgentReloadsCertificatesOnSIGHUP runs a real agent with mutual TLS,
// renews its certificate and revokes one of two coordinators of the same
// CA where ca.key is, copies the new pair and ca.crl to the agent's
// directory and sends the process a real SIGHUP: the agent keeps serving,
// new connections see the new certificate, the revoked coordinator is
// refused and the other is not. A reload that fails (ca.key copied
// beside the certificates) is logged and keeps the agent serving.
func TestAgentReloadsCertificatesOnSIGHUP(t *testing.T) {
	h := newCertHosts(t, "10")
	key := filepath.Join(t.TempDir(), "gossip.key")
	if err := os.WriteFile(key, []byte("AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	stderr, stop := startAgent(t, "serving the Agent service", "--role", "receiver", "--iface", "eth0", "--root", host(t), "--state-dir", t.TempDir(),
		"--tls-dir", h.agent, "--grpc", "127.0.0.1:0", "--bind", "", "--name", "a1", "--gossip-key", key)
	m := regexp.MustCompile(`serving the Agent service: addr=(\S+)`).FindStringSubmatch(stderr.String())
	if m == nil {
		t.Fatalf("no gRPC address logged:\n%s", stderr.String())
	}
	addr := m[1]
	if !strings.Contains(stderr.String(), "certificate expires in") || !strings.Contains(stderr.String(), "certs renew") {
		t.Errorf("no expiry warning at start for a 10-day certificate:\n%s", stderr.String())
	}
	as := func(name string) credentials.TransportCredentials {
		creds, err := mtls.ClientCredentials(mtls.Options{Dir: h.coord, Name: name, ServerName: "a1", PeerRoles: []mtls.Role{mtls.RoleAgent}})
		if err != nil {
			t.Fatal(err)
		}
		return creds
	}
	c1, c2 := as("c1"), as("c2")
	first := readCert(t, filepath.Join(h.agent, "a1.crt")).SerialNumber
	for _, c := range []credentials.TransportCredentials{c1, c2} {
		if got, err := describeAs(t, c, addr); err != nil || got.Cmp(first) != 0 {
			t.Fatalf("before the reload: serial %v, %v; want %v", got, err, first)
		}
	}

	for _, args := range [][]string{
		{"certs", "renew", "--dir", h.ca, "a1"},
		{"certs", "revoke", "--dir", h.ca, "c1"},
	} {
		if code, _, errOut := linerate(t, args...); code != 0 {
			t.Fatalf("%v: %s", args, errOut)
		}
	}
	h.copy(t, h.agent, "a1.crt", "a1.key", mtls.CRLFile)
	renewed := readCert(t, filepath.Join(h.agent, "a1.crt")).SerialNumber
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitLog(t, stderr, "reloaded certificates", 1)
	if _, err := describeAs(t, c1, addr); err == nil {
		t.Error("the revoked coordinator c1 was served after the reload")
	}
	if got, err := describeAs(t, c2, addr); err != nil || got.Cmp(renewed) != 0 {
		t.Errorf("c2 after the reload: serial %v, %v; want the renewed %v", got, err, renewed)
	}

	h.copy(t, h.agent, mtls.CAKeyFile)
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitLog(t, stderr, "certificate reload failed", 1)
	if !strings.Contains(stderr.String(), filepath.Join(h.agent, mtls.CAKeyFile)) {
		t.Errorf("the failed reload does not name %s:\n%s", filepath.Join(h.agent, mtls.CAKeyFile), stderr.String())
	}
	if got, err := describeAs(t, c2, addr); err != nil || got.Cmp(renewed) != 0 {
		t.Errorf("c2 after the failed reload: serial %v, %v; want %v still", got, err, renewed)
	}
	if code := stop(); code != 0 {
		t.Errorf("exit %d:\n%s", code, stderr.String())
	}
}
