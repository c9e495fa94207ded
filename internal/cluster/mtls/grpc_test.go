package mtls_test

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthgrpc "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"

	"github.com/linerate/linerate/internal/cluster/mtls"
	lineratev1 "github.com/linerate/linerate/proto/linerate/v1"
)

// countingAgent answers Describe with who called, and counts the calls
// that reached it.
type countingAgent struct {
	lineratev1.UnimplementedAgentServer
	calls atomic.Int32
}

func (a *countingAgent) Describe(ctx context.Context, _ *lineratev1.DescribeRequest) (*lineratev1.DescribeResponse, error) {
	a.calls.Add(1)
	p, err := mtls.PeerFromContext(ctx)
	if err != nil {
		return &lineratev1.DescribeResponse{HostName: "agent1", Version: "anonymous"}, nil
	}
	return &lineratev1.DescribeResponse{HostName: "agent1", Version: p.Name + "/" + string(p.Role)}, nil
}

// certs is a cluster CA with an agent and two coordinators, and a foreign
// CA with a coordinator of the same name. As on real hosts, the served
// directories hold no ca.key: the cluster's CA key is in ca (with ca.crt).
type certs struct{ dir, foreign, ca string }

func newCerts(t *testing.T) certs {
	t.Helper()
	c := certs{dir: filepath.Join(t.TempDir(), "tls"), foreign: filepath.Join(t.TempDir(), "other")}
	for _, d := range []string{c.dir, c.foreign} {
		if _, _, err := mtls.Init(d, mtls.CAOptions{}, false); err != nil {
			t.Fatal(err)
		}
	}
	for _, o := range []mtls.LeafOptions{
		{Name: "agent1", Role: mtls.RoleAgent, Hosts: []string{"198.18.0.2"}},
		{Name: "agent2", Role: mtls.RoleAgent},
		{Name: "coord", Role: mtls.RoleCoordinator},
		{Name: "coord2", Role: mtls.RoleCoordinator},
	} {
		if _, _, err := mtls.Issue(c.dir, o, false); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := mtls.Issue(c.foreign, mtls.LeafOptions{Name: "coord", Role: mtls.RoleCoordinator}, false); err != nil {
		t.Fatal(err)
	}
	c.ca = moveCAKey(t, c.dir)
	moveCAKey(t, c.foreign)
	return c
}

// moveCAKey moves dir's ca.key into a new directory with a copy of
// ca.crt, and returns that directory (where certificates are issued and
// revoked from).
func moveCAKey(t *testing.T, dir string) string {
	t.Helper()
	ca := t.TempDir()
	crt, err := os.ReadFile(filepath.Join(dir, mtls.CACertFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ca, mtls.CACertFile), crt, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(dir, mtls.CAKeyFile), filepath.Join(ca, mtls.CAKeyFile)); err != nil {
		t.Fatal(err)
	}
	return ca
}

// serve runs an Agent (and health) server on a bufconn listener.
func serve(t *testing.T, creds credentials.TransportCredentials) (*bufconn.Listener, *countingAgent) {
	t.Helper()
	lis := bufconn.Listen(1 << 20)
	srv := grpc.NewServer(mtls.ServerOptions(creds)...)
	agent := &countingAgent{}
	lineratev1.RegisterAgentServer(srv, agent)
	healthgrpc.RegisterHealthServer(srv, health.NewServer())
	go srv.Serve(lis)
	t.Cleanup(srv.Stop)
	return lis, agent
}

func dial(t *testing.T, lis *bufconn.Listener, creds credentials.TransportCredentials) *grpc.ClientConn {
	t.Helper()
	opts := append(mtls.DialOptions(creds), grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) {
		return lis.DialContext(ctx)
	}))
	conn, err := grpc.NewClient("passthrough:///agent1", opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

func describe(t *testing.T, conn *grpc.ClientConn) (*lineratev1.DescribeResponse, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return lineratev1.NewAgentClient(conn).Describe(ctx, &lineratev1.DescribeRequest{})
}

func serverCreds(t *testing.T, o mtls.Options) credentials.TransportCredentials {
	t.Helper()
	creds, err := mtls.ServerCredentials(o)
	if err != nil {
		t.Fatal(err)
	}
	return creds
}

func clientCreds(t *testing.T, o mtls.Options) credentials.TransportCredentials {
	t.Helper()
	creds, err := mtls.ClientCredentials(o)
	if err != nil {
		t.Fatal(err)
	}
	return creds
}

func TestMutualTLSAccepts(t *testing.T) {
	c := newCerts(t)
	lis, agent := serve(t, serverCreds(t, mtls.Options{Dir: c.dir, Name: "agent1", PeerRoles: []mtls.Role{mtls.RoleCoordinator}}))
	conn := dial(t, lis, clientCreds(t, mtls.Options{Dir: c.dir, Name: "coord", ServerName: "agent1", PeerRoles: []mtls.Role{mtls.RoleAgent}}))
	resp, err := describe(t, conn)
	if err != nil {
		t.Fatal(err)
	}
	if resp.GetHostName() != "agent1" || resp.GetVersion() != "coord/coordinator" {
		t.Errorf("got %v; the handler should see the caller as coord/coordinator", resp)
	}
	if n := agent.calls.Load(); n != 1 {
		t.Errorf("handler reached %d times, want 1", n)
	}
	// The server certificate also names its IP address.
	conn = dial(t, lis, clientCreds(t, mtls.Options{Dir: c.dir, Name: "coord", ServerName: "198.18.0.2"}))
	if _, err := describe(t, conn); err != nil {
		t.Fatalf("dial by IP SAN: %v", err)
	}
}

// TestMutualTLSRefuses checks that every client that is not a CA-signed
// coordinator, and every server that is not the CA-signed agent the client
// named, gets no RPC through, and that the handler is never reached.
func TestMutualTLSRefuses(t *testing.T) {
	c := newCerts(t)
	id, err := mtls.Load(c.dir, "coord")
	if err != nil {
		t.Fatal(err)
	}
	foreign, err := mtls.Load(c.foreign, "coord")
	if err != nil {
		t.Fatal(err)
	}
	ca, err := mtls.LoadCA(c.ca)
	if err != nil {
		t.Fatal(err)
	}
	past := func() time.Time { return time.Now().Add(-48 * time.Hour) }
	expired, err := ca.IssueLeaf(mtls.LeafOptions{Name: "coord", Role: mtls.RoleCoordinator, Validity: time.Hour, Now: past})
	if err != nil {
		t.Fatal(err)
	}
	server := mtls.Options{Dir: c.dir, Name: "agent1", PeerRoles: []mtls.Role{mtls.RoleCoordinator}}
	tlsCreds := func(cfg *tls.Config) credentials.TransportCredentials { return credentials.NewTLS(cfg) }
	for _, tc := range []struct {
		name   string
		server mtls.Options
		client credentials.TransportCredentials
		// says is part of the client's error where the client itself
		// refuses, or the server refuses during the handshake. A TLS 1.3
		// client has finished its handshake before the server checks its
		// certificate, so then it sees the server's alert or only a closed
		// connection, whichever comes first.
		says string
	}{
		{"no client certificate", server, tlsCreds(&tls.Config{MinVersion: tls.VersionTLS13, RootCAs: id.CAs, ServerName: "agent1"}), ""},
		{"client signed by another CA", server, tlsCreds(&tls.Config{
			MinVersion: tls.VersionTLS13, RootCAs: id.CAs, ServerName: "agent1", Certificates: []tls.Certificate{foreign.Cert},
		}), ""},
		{"expired client certificate", server, tlsCreds(&tls.Config{
			MinVersion: tls.VersionTLS13, RootCAs: id.CAs, ServerName: "agent1", Certificates: []tls.Certificate{expired.TLSCertificate()},
		}), ""},
		{"plaintext client", server, insecure.NewCredentials(), ""},
		{"agent certificate where a coordinator is wanted", server, clientCreds(t, mtls.Options{Dir: c.dir, Name: "agent2", ServerName: "agent1"}), ""},
		{"TLS 1.2 client", server, tlsCreds(&tls.Config{
			MaxVersion: tls.VersionTLS12, RootCAs: id.CAs, ServerName: "agent1", Certificates: []tls.Certificate{id.Cert},
		}), "protocol version"},
		{"server is not the agent named", server, clientCreds(t, mtls.Options{Dir: c.dir, Name: "coord", ServerName: "agent2"}), "not agent2"},
		{"server signed by another CA", server, tlsCreds(&tls.Config{
			MinVersion: tls.VersionTLS13, RootCAs: foreign.CAs, ServerName: "agent1", Certificates: []tls.Certificate{foreign.Cert},
		}), "unknown authority"},
		{"server is not an agent", mtls.Options{Dir: c.dir, Name: "coord"},
			clientCreds(t, mtls.Options{Dir: c.dir, Name: "agent2", ServerName: "coord", PeerRoles: []mtls.Role{mtls.RoleAgent}}), "is a coordinator, want [agent]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lis, agent := serve(t, serverCreds(t, tc.server))
			conn := dial(t, lis, tc.client)
			_, err := describe(t, conn)
			if code := status.Code(err); code != codes.Unavailable && code != codes.Unauthenticated {
				t.Errorf("Describe: %v (code %v), want Unavailable or Unauthenticated", err, code)
			}
			if !strings.Contains(status.Convert(err).Message(), tc.says) {
				t.Errorf("Describe: %v, want it to say %q", err, tc.says)
			}
			hc := healthgrpc.NewHealthClient(conn)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if _, err := hc.Check(ctx, &healthgrpc.HealthCheckRequest{}); err == nil {
				t.Error("health check got through")
			}
			if n := agent.calls.Load(); n != 0 {
				t.Errorf("handler reached %d times, want 0", n)
			}
		})
	}
}

// TestInsecureOnlyWhenAsked checks that plaintext is served only with
// Insecure, and that a handler then sees no verified peer.
func TestInsecureOnlyWhenAsked(t *testing.T) {
	for _, o := range []mtls.Options{{}, {Dir: "x"}, {Name: "agent1"}} {
		if _, err := mtls.ServerCredentials(o); !errors.Is(err, mtls.ErrNoTLS) || !strings.Contains(err.Error(), "--insecure") {
			t.Errorf("ServerCredentials(%+v) = %v, want ErrNoTLS naming --insecure", o, err)
		}
		if _, err := mtls.ClientCredentials(o); !errors.Is(err, mtls.ErrNoTLS) {
			t.Errorf("ClientCredentials(%+v) = %v, want ErrNoTLS", o, err)
		}
	}
	if _, err := mtls.ServerCredentials(mtls.Options{Dir: "x", Name: "a", Insecure: true}); !errors.Is(err, mtls.ErrNoTLS) {
		t.Errorf("directory and insecure together: %v, want ErrNoTLS", err)
	}
	lis, agent := serve(t, serverCreds(t, mtls.Options{Insecure: true}))
	conn := dial(t, lis, clientCreds(t, mtls.Options{Insecure: true}))
	resp, err := describe(t, conn)
	if err != nil {
		t.Fatal(err)
	}
	if resp.GetVersion() != "anonymous" || agent.calls.Load() != 1 {
		t.Errorf("insecure call: %v, %d calls", resp, agent.calls.Load())
	}
	if _, err := mtls.PeerFromContext(context.Background()); !errors.Is(err, mtls.ErrNoPeer) {
		t.Errorf("PeerFromContext without a peer: %v", err)
	}
}

func TestServerTLSIsTLS13WithClientAuth(t *testing.T) {
	c := newCerts(t)
	cfg, err := mtls.ServerTLS(c.dir, "agent1")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.MinVersion != tls.VersionTLS13 || cfg.ClientAuth != tls.RequireAndVerifyClientCert || cfg.ClientCAs == nil {
		t.Errorf("server config: min version %x, client auth %v, client CAs %v", cfg.MinVersion, cfg.ClientAuth, cfg.ClientCAs)
	}
	ccfg, err := mtls.ClientTLS(c.dir, "coord", "agent1")
	if err != nil {
		t.Fatal(err)
	}
	if ccfg.MinVersion != tls.VersionTLS13 || ccfg.ServerName != "agent1" || ccfg.RootCAs == nil || len(ccfg.Certificates) != 1 || ccfg.InsecureSkipVerify {
		t.Errorf("client config: %+v", ccfg)
	}
}
