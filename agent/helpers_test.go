package agent

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/linerate/linerate/internal/cluster/mtls"
	lineratev1 "github.com/linerate/linerate/proto/linerate/v1"
)

// testGossipKey is the gossip key of the tests' clusters.
var testGossipKey = []byte("linerate agent test gossip key!!")

// testLog sends hclog output to t.Log.
func testLog(t testing.TB) hclog.Logger {
	return hclog.New(&hclog.LoggerOptions{Name: t.Name(), Level: hclog.Debug, Output: testWriter{t}})
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// testCerts makes a CA with an agent ("agent1"), a coordinator ("coord")
// and a second agent certificate ("agent2", for refusal tests).
func testCerts(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	if _, _, err := mtls.Init(dir, mtls.CAOptions{}, false); err != nil {
		t.Fatal(err)
	}
	for _, o := range []mtls.LeafOptions{
		{Name: "agent1", Role: mtls.RoleAgent, Hosts: []string{"127.0.0.1"}},
		{Name: "agent2", Role: mtls.RoleAgent, Hosts: []string{"127.0.0.1"}},
		{Name: "coord", Role: mtls.RoleCoordinator},
	} {
		if _, _, err := mtls.Issue(dir, o, false); err != nil {
			t.Fatal(err)
		}
	}
	// As on a real host, no CA key beside the served certificates: it
	// moves to a CA directory of its own, where certFor issues more.
	ca := t.TempDir()
	for _, f := range []string{mtls.CACertFile, mtls.CAKeyFile} {
		if err := os.Rename(filepath.Join(dir, f), filepath.Join(ca, f)); err != nil {
			t.Fatal(err)
		}
	}
	copyFile(t, filepath.Join(ca, mtls.CACertFile), filepath.Join(dir, mtls.CACertFile))
	caDirs.Store(dir, ca)
	return dir
}

// caDirs maps a testCerts directory to the directory holding its CA key.
var caDirs sync.Map

// copyFile copies from to to, keeping from's mode.
func copyFile(t testing.TB, from, to string) {
	t.Helper()
	fi, err := os.Stat(from)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, fi.Mode().Perm()); err != nil {
		t.Fatal(err)
	}
}

// certFor is the agent certificate of certs for the agent named name,
// issued (for 127.0.0.1) when certs has none: the node name is the
// certificate's, as a sender checks when it asks a receiver. An unnamed
// agent gets agent1.
func certFor(t testing.TB, certs, name string) string {
	t.Helper()
	if name == "" {
		return "agent1"
	}
	if _, err := os.Stat(mtls.CertPath(certs, name)); err == nil {
		return name
	}
	issueIn(t, certs, mtls.LeafOptions{Name: name, Role: mtls.RoleAgent, Hosts: []string{"127.0.0.1"}})
	return name
}

// issueIn issues o with the CA of the testCerts directory certs and puts
// the pair in certs.
func issueIn(t testing.TB, certs string, o mtls.LeafOptions) {
	t.Helper()
	ca := certs
	if d, ok := caDirs.Load(certs); ok {
		ca = d.(string)
	}
	if _, _, err := mtls.Issue(ca, o, false); err != nil {
		t.Fatal(err)
	}
	if ca != certs {
		for _, f := range []string{o.Name + ".crt", o.Name + ".key"} {
			copyFile(t, filepath.Join(ca, f), filepath.Join(certs, f))
		}
	}
}

// startAgent starts an agent on 127.0.0.1 with mTLS from certs, shut down
// at the end of the test.
func startAgent(t testing.TB, cfg Config, certs string) *Agent {
	t.Helper()
	cfg.TLSDir = certs
	if cfg.TLSName == "" {
		cfg.TLSName = certFor(t, certs, cfg.Name)
	}
	if cfg.Bind != "" && cfg.GossipKey == nil && !cfg.InsecureGossip {
		cfg.GossipKey = testGossipKey // the cluster's key, as every agent of a test shares it
	}
	if cfg.GRPCAddr == "" {
		cfg.GRPCAddr = "127.0.0.1:0"
	}
	if cfg.StateDir == "" {
		cfg.StateDir = t.TempDir()
	}
	if cfg.Logger == nil {
		cfg.Logger = testLog(t)
	}
	a, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := a.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	})
	return a
}

// dial connects to a as the named certificate of certs.
func dial(t testing.TB, a *Agent, certs, name string) lineratev1.AgentClient {
	t.Helper()
	return lineratev1.NewAgentClient(dialAs(t, a, certs, name))
}

// dialConn connects to a as its cluster's coordinator.
func dialConn(t testing.TB, a *Agent) *grpc.ClientConn {
	t.Helper()
	return dialAs(t, a, a.cfg.TLSDir, "coord")
}

func dialAs(t testing.TB, a *Agent, certs, name string) *grpc.ClientConn {
	t.Helper()
	creds, err := mtls.ClientCredentials(mtls.Options{Dir: certs, Name: name, ServerName: a.cfg.TLSName, PeerRoles: []mtls.Role{mtls.RoleAgent}})
	if err != nil {
		t.Fatal(err)
	}
	conn, err := grpc.NewClient(a.GRPCAddr(), mtls.DialOptions(creds)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

func ctxT(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func wantCode(t testing.TB, err error, code codes.Code, what string) {
	t.Helper()
	if status.Code(err) != code {
		t.Errorf("%s: got %v, want %s", what, err, code)
	}
}

// poll waits up to d for cond.
func poll(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, d)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// scrape reads a's /metrics: the value of every series, keyed by its name
// and labels as the exposition writes them (`name{label="v"}`).
func scrape(t testing.TB, a *Agent) map[string]float64 {
	t.Helper()
	resp, err := http.Get("http://" + a.MetricsAddr() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("scrape: %s %v", resp.Status, err)
	}
	out := map[string]float64{}
	for _, line := range strings.Split(string(b), "\n") {
		i := strings.LastIndexByte(line, ' ')
		if line == "" || line[0] == '#' || i < 0 {
			continue
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("scrape: line %q: %v", line, err)
		}
		out[line[:i]] = v
	}
	return out
}

// wantMetrics checks series of a scrape.
func wantMetrics(t testing.TB, what string, got map[string]float64, want map[string]float64) {
	t.Helper()
	for k, v := range want {
		if g, ok := got[k]; !ok || g != v {
			t.Errorf("%s: %s = %v (present %v), want %v", what, k, g, ok, v)
		}
	}
}

// sendNow configures cfg on the holder of lease, starts it now and
// waits for its Result.
func sendNow(t *testing.T, ctx context.Context, c lineratev1.AgentClient, lease string, cfg *lineratev1.SenderConfig) *lineratev1.ResultResponse {
	t.Helper()
	if _, err := c.Configure(ctx, &lineratev1.ConfigureRequest{LeaseId: lease, Config: cfg}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Start(ctx, &lineratev1.StartRequest{LeaseId: lease, At: timestamppb.New(time.Now())}); err != nil {
		t.Fatal(err)
	}
	res, err := c.Result(ctx, &lineratev1.ResultRequest{LeaseId: lease, Wait: true})
	if err != nil {
		t.Fatal(err)
	}
	return res
}
