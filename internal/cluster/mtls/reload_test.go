package mtls_test

import (
	"context"
	"errors"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/peer"

	"github.com/linerate/linerate/internal/cluster/mtls"
	lineratev1 "github.com/linerate/linerate/proto/linerate/v1"
)

// serveTCP runs an Agent server with creds on a loopback TCP port.
func serveTCP(t *testing.T, creds credentials.TransportCredentials) (string, *countingAgent) {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer(mtls.ServerOptions(creds)...)
	agent := &countingAgent{}
	lineratev1.RegisterAgentServer(srv, agent)
	go srv.Serve(lis)
	t.Cleanup(srv.Stop)
	return lis.Addr().String(), agent
}

// call dials addr anew (a new TCP connection and handshake) with creds
// and returns the serial of the server's certificate.
func call(t *testing.T, addr string, creds credentials.TransportCredentials) (*big.Int, error) {
	t.Helper()
	conn, err := grpc.NewClient(addr, mtls.DialOptions(creds)...)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	return describeOn(conn)
}

func describeOn(conn *grpc.ClientConn) (*big.Int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var p peerInfo
	if _, err := lineratev1.NewAgentClient(conn).Describe(ctx, &lineratev1.DescribeRequest{}, grpc.Peer(&p.Peer)); err != nil {
		return nil, err
	}
	return p.serial(), nil
}

// reissue issues name again from c's CA and installs the pair in c.dir,
// as an operator copies a renewed pair to the host.
func reissue(t *testing.T, c certs, o mtls.LeafOptions) *big.Int {
	t.Helper()
	leaf, _, err := mtls.Issue(c.ca, o, true)
	if err != nil {
		t.Fatal(err)
	}
	install(t, mtls.CertPath(c.ca, o.Name), mtls.CertPath(c.dir, o.Name), 0o644)
	install(t, mtls.KeyPath(c.ca, o.Name), mtls.KeyPath(c.dir, o.Name), 0o600)
	return leaf.Cert.SerialNumber
}

func install(t *testing.T, from, to string, mode os.FileMode) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(to, mode); err != nil {
		t.Fatal(err)
	}
}

func serialOf(t *testing.T, dir, name string) *big.Int {
	t.Helper()
	cert, err := mtls.ReadCertificate(dir, name)
	if err != nil {
		t.Fatal(err)
	}
	return cert.SerialNumber
}

// TestReloadRotatesServerCertificate replaces a serving agent's pair:
// new connections see the new certificate only after Reload, and a
// reload that fails (a torn file, ca.key copied beside it, a key mode
// 0644) keeps the certificate in use.
func TestReloadRotatesServerCertificate(t *testing.T) {
	c := newCerts(t)
	r, err := mtls.NewServerReloader(mtls.Options{Dir: c.dir, Name: "agent1", PeerRoles: []mtls.Role{mtls.RoleCoordinator}})
	if err != nil {
		t.Fatal(err)
	}
	addr, _ := serveTCP(t, r)
	// Read once: the coordinator's own directory is another host's.
	client := clientCreds(t, mtls.Options{Dir: c.dir, Name: "coord", ServerName: "agent1", PeerRoles: []mtls.Role{mtls.RoleAgent}})
	old := serialOf(t, c.dir, "agent1")
	if got, err := call(t, addr, client); err != nil || got.Cmp(old) != 0 {
		t.Fatalf("before rotation: serial %v, %v; want %v", got, err, old)
	}

	renewed := reissue(t, c, mtls.LeafOptions{Name: "agent1", Role: mtls.RoleAgent, Hosts: []string{"198.18.0.2"}})
	if got, err := call(t, addr, client); err != nil || got.Cmp(old) != 0 {
		t.Errorf("replaced but not reloaded: serial %v, %v; want the old %v", got, err, old)
	}
	id, _, err := r.Reload()
	if err != nil || id.Cert.Leaf.SerialNumber.Cmp(renewed) != 0 {
		t.Fatalf("reload: %v, %v", id, err)
	}
	if got, err := call(t, addr, client); err != nil || got.Cmp(renewed) != 0 {
		t.Errorf("after reload: serial %v, %v; want the new %v", got, err, renewed)
	}

	for _, tc := range []struct {
		name   string
		break_ func()
		fix    func()
		is     error
		says   string
	}{
		{"torn certificate", func() { os.WriteFile(mtls.CertPath(c.dir, "agent1"), []byte("-----BEGIN CERT"), 0o644) },
			func() { install(t, mtls.CertPath(c.ca, "agent1"), mtls.CertPath(c.dir, "agent1"), 0o644) }, nil, "agent1"},
		{"ca.key beside it", func() { install(t, filepath.Join(c.ca, mtls.CAKeyFile), filepath.Join(c.dir, mtls.CAKeyFile), 0o600) },
			func() { os.Remove(filepath.Join(c.dir, mtls.CAKeyFile)) }, mtls.ErrUnsafe, "ca.key"},
		{"key mode 0644", func() { os.Chmod(mtls.KeyPath(c.dir, "agent1"), 0o644) },
			func() { os.Chmod(mtls.KeyPath(c.dir, "agent1"), 0o600) }, mtls.ErrUnsafe, "chmod 600"},
	} {
		tc.break_()
		_, _, err := r.Reload()
		if err == nil || (tc.is != nil && !errors.Is(err, tc.is)) || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s: reload: %v, want an error saying %q", tc.name, err, tc.says)
		}
		if got, err := call(t, addr, client); err != nil || got.Cmp(renewed) != 0 {
			t.Errorf("%s: after the failed reload: serial %v, %v; want the previous %v", tc.name, got, err, renewed)
		}
		tc.fix()
	}
}

// TestRevokedCoordinatorRefusedAfterReload revokes one of two coordinator
// certificates of the same CA: after the agent's reload the revoked one
// gets no new connection and its open one is closed; the other keeps
// working.
func TestRevokedCoordinatorRefusedAfterReload(t *testing.T) {
	c := newCerts(t)
	r, err := mtls.NewServerReloader(mtls.Options{Dir: c.dir, Name: "agent1", PeerRoles: []mtls.Role{mtls.RoleCoordinator}})
	if err != nil {
		t.Fatal(err)
	}
	addr, agent := serveTCP(t, r)
	as := func(name string) credentials.TransportCredentials {
		return clientCreds(t, mtls.Options{Dir: c.dir, Name: name, ServerName: "agent1", PeerRoles: []mtls.Role{mtls.RoleAgent}})
	}
	// The revoked coordinator read its directory before the list came
	// (with the list it would refuse to present its own certificate).
	coord, coord2 := as("coord"), as("coord2")
	open, err := grpc.NewClient(addr, mtls.DialOptions(coord)...)
	if err != nil {
		t.Fatal(err)
	}
	defer open.Close()
	if _, err := describeOn(open); err != nil {
		t.Fatal(err)
	}

	added, crl, err := mtls.Revoke(c.ca, []*big.Int{serialOf(t, c.dir, "coord")}, time.Now())
	if err != nil || len(added) != 1 {
		t.Fatalf("revoke: %v, %v", added, err)
	}
	install(t, crl, filepath.Join(c.dir, mtls.CRLFile), 0o644)
	if _, err := call(t, addr, coord); err != nil {
		t.Errorf("revoked but not reloaded: %v", err)
	}
	if _, n, err := r.Reload(); err != nil || n != 1 {
		t.Fatalf("reload: %d revoked, %v", n, err)
	}
	calls := agent.calls.Load()
	if _, err := call(t, addr, coord); err == nil {
		t.Error("a revoked coordinator certificate got a new connection")
	}
	if _, err := describeOn(open); err == nil {
		t.Error("the revoked coordinator's open connection survived the reload")
	}
	if n := agent.calls.Load(); n != calls {
		t.Errorf("the revoked coordinator reached the handler %d times", n-calls)
	}
	if _, err := call(t, addr, coord2); err != nil {
		t.Errorf("the other coordinator of the same CA: %v", err)
	}
}

// TestCoordinatorRefusesRevokedAgent: a client with the revocation list
// refuses a server whose certificate is on it, naming the serial; the
// revoked agent itself refuses to load its certificate again.
func TestCoordinatorRefusesRevokedAgent(t *testing.T) {
	c := newCerts(t)
	server := mtls.Options{Dir: c.dir, Name: "agent1", PeerRoles: []mtls.Role{mtls.RoleCoordinator}}
	r, err := mtls.NewServerReloader(server)
	if err != nil {
		t.Fatal(err)
	}
	addr, _ := serveTCP(t, r)
	serial := serialOf(t, c.dir, "agent1")
	_, crl, err := mtls.Revoke(c.ca, []*big.Int{serial}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	install(t, crl, filepath.Join(c.dir, mtls.CRLFile), 0o644)
	_, err = call(t, addr, clientCreds(t, mtls.Options{Dir: c.dir, Name: "coord", ServerName: "agent1", PeerRoles: []mtls.Role{mtls.RoleAgent}}))
	if err == nil || !strings.Contains(err.Error(), "revoked") || !strings.Contains(err.Error(), mtls.Serial(serial)) {
		t.Errorf("dial a revoked agent: %v, want a refusal naming serial %s", err, mtls.Serial(serial))
	}
	if _, _, err := r.Reload(); !errors.Is(err, mtls.ErrRevoked) || !strings.Contains(err.Error(), "certs renew agent1") {
		t.Errorf("reload of a revoked own certificate: %v, want ErrRevoked and the renew command", err)
	}
	if _, err := mtls.NewServerReloader(server); !errors.Is(err, mtls.ErrRevoked) {
		t.Errorf("start with a revoked own certificate: %v, want ErrRevoked", err)
	}
}

// TestRevocationListMustBeTheCAs: a CRL signed by another CA is refused,
// not ignored.
func TestRevocationListMustBeTheCAs(t *testing.T) {
	c := newCerts(t)
	foreignCA := t.TempDir()
	if _, _, err := mtls.Init(foreignCA, mtls.CAOptions{}, false); err != nil {
		t.Fatal(err)
	}
	_, crl, err := mtls.Revoke(foreignCA, []*big.Int{big.NewInt(7)}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	install(t, crl, filepath.Join(c.dir, mtls.CRLFile), 0o644)
	_, err = mtls.NewServerReloader(mtls.Options{Dir: c.dir, Name: "agent1"})
	if err == nil || !strings.Contains(err.Error(), "not signed by the CA") || !strings.Contains(err.Error(), mtls.CRLFile) {
		t.Errorf("foreign CRL: %v, want a refusal naming %s", err, mtls.CRLFile)
	}
	// Revoking twice adds nothing.
	if _, _, err := mtls.Revoke(c.ca, []*big.Int{big.NewInt(7)}, time.Now()); err != nil {
		t.Fatal(err)
	}
	added, _, err := mtls.Revoke(c.ca, []*big.Int{big.NewInt(7), big.NewInt(8)}, time.Now())
	if err != nil || len(added) != 1 || added[0].Int64() != 8 {
		t.Errorf("second revoke added %v, %v; want only 8", added, err)
	}
}

type peerInfo struct{ Peer peer.Peer }

func (p *peerInfo) serial() *big.Int {
	ti, ok := p.Peer.AuthInfo.(credentials.TLSInfo)
	if !ok || len(ti.State.PeerCertificates) == 0 {
		return nil
	}
	return ti.State.PeerCertificates[0].SerialNumber
}
