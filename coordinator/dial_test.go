package coordinator

import (
	"context"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	grpchealth "google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/linerate/linerate/internal/cluster/gossip"
	"github.com/linerate/linerate/internal/cluster/mtls"
	lineratev1 "github.com/linerate/linerate/proto/linerate/v1"
)

// copyFiles copies names from one directory to another, keeping modes.
func copyFiles(t *testing.T, from, to string, names ...string) {
	t.Helper()
	for _, n := range names {
		st, err := os.Stat(filepath.Join(from, n))
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(from, n))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(to, n), b, st.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
	}
}

// The coordinator reads its certificate directory at every dial: the
// same dialer refuses an agent once ca.crl revokes it, and refuses to
// dial at all once ca.key sits in its directory.
func TestTLSDialerChecksRevocationAtEveryDial(t *testing.T) {
	ca, agentDir, coordDir := t.TempDir(), t.TempDir(), t.TempDir()
	if _, _, err := mtls.Init(ca, mtls.CAOptions{}, false); err != nil {
		t.Fatal(err)
	}
	agent, _, err := mtls.Issue(ca, mtls.LeafOptions{Name: "a1", Role: mtls.RoleAgent}, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := mtls.Issue(ca, mtls.LeafOptions{Name: "coord", Role: mtls.RoleCoordinator}, false); err != nil {
		t.Fatal(err)
	}
	copyFiles(t, ca, agentDir, mtls.CACertFile, "a1.crt", "a1.key")
	copyFiles(t, ca, coordDir, mtls.CACertFile, "coord.crt", "coord.key")

	creds, err := mtls.ServerCredentials(mtls.Options{Dir: agentDir, Name: "a1", PeerRoles: []mtls.Role{mtls.RoleCoordinator}})
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer(mtls.ServerOptions(creds)...)
	hs := grpchealth.NewServer()
	hs.SetServingStatus(lineratev1.Agent_ServiceDesc.ServiceName, healthpb.HealthCheckResponse_SERVING)
	healthpb.RegisterHealthServer(srv, hs)
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)

	dial := TLSDialer(mtls.Options{Dir: coordDir, Name: "coord"})
	members := []Member{{Name: "a1", Tags: gossip.Tags{GRPC: lis.Addr().String()}, Status: "alive"}}
	check := func() string { return Check(context.Background(), members, dial, 5*time.Second)[0].Health }
	if h := check(); h != "serving" {
		t.Fatalf("before revocation: %q", h)
	}
	if _, _, err := mtls.Revoke(ca, []*big.Int{agent.Cert.SerialNumber}, time.Now()); err != nil {
		t.Fatal(err)
	}
	copyFiles(t, ca, coordDir, mtls.CRLFile)
	if h := check(); h == "serving" || !strings.Contains(h, "revoked") || !strings.Contains(h, mtls.Serial(agent.Cert.SerialNumber)) {
		t.Errorf("a revoked agent: %q, want a refusal naming its serial", h)
	}
	copyFiles(t, ca, coordDir, mtls.CAKeyFile)
	if h := check(); !strings.Contains(h, filepath.Join(coordDir, mtls.CAKeyFile)) {
		t.Errorf("ca.key in the coordinator's directory: %q, want a refusal naming it", h)
	}
}
