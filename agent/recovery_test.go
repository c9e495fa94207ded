package agent

import (
	"context"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"

	"github.com/linerate/linerate/internal/cluster/mtls"
	lineratev1 "github.com/linerate/linerate/proto/linerate/v1"
)

// panicky is an Agent service whose Describe and Watch panic on their
// first call and answer after.
type panicky struct {
	lineratev1.UnimplementedAgentServer
	mu                 sync.Mutex
	described, watched bool
}

func (p *panicky) Describe(context.Context, *lineratev1.DescribeRequest) (*lineratev1.DescribeResponse, error) {
	p.mu.Lock()
	first := !p.described
	p.described = true
	p.mu.Unlock()
	if first {
		s := make([]int, 0, 1)
		_ = s[cap(s)] // an index out of range: a real runtime panic
	}
	return &lineratev1.DescribeResponse{HostName: "still-here"}, nil
}

func (p *panicky) Watch(_ *lineratev1.WatchRequest, stream grpc.ServerStreamingServer[lineratev1.WatchResponse]) error {
	p.mu.Lock()
	first := !p.watched
	p.watched = true
	p.mu.Unlock()
	if first {
		panic("watch exploded")
	}
	return stream.Send(&lineratev1.WatchResponse{})
}

// String is what the agent logged so far (syncBuffer: identity_test.go).
func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestRecoveryInterceptor: over real gRPC with mutual TLS, a handler that
// panics (unary and streaming) is answered Internal, the panic is logged
// with the method, the caller's certificate name, the value and the stack,
// and the next call succeeds on the same server.
func TestRecoveryInterceptor(t *testing.T) {
	certs := testCerts(t)
	creds, err := mtls.ServerCredentials(mtls.Options{Dir: certs, Name: "agent1", PeerRoles: []mtls.Role{mtls.RoleCoordinator}})
	if err != nil {
		t.Fatal(err)
	}
	var logs syncBuffer
	rec := recovery{log: hclog.New(&hclog.LoggerOptions{Output: &logs, Level: hclog.Debug})}
	srv := grpc.NewServer(append(mtls.ServerOptions(creds),
		grpc.ChainUnaryInterceptor(rec.unary), grpc.ChainStreamInterceptor(rec.stream))...)
	lineratev1.RegisterAgentServer(srv, &panicky{})
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(lis)
	t.Cleanup(srv.Stop)
	ccreds, err := mtls.ClientCredentials(mtls.Options{Dir: certs, Name: "coord", ServerName: "agent1", PeerRoles: []mtls.Role{mtls.RoleAgent}})
	if err != nil {
		t.Fatal(err)
	}
	conn, err := grpc.NewClient(lis.Addr().String(), mtls.DialOptions(ccreds)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	c := lineratev1.NewAgentClient(conn)
	ctx := ctxT(t, 10*time.Second)

	_, err = c.Describe(ctx, &lineratev1.DescribeRequest{})
	wantCode(t, err, codes.Internal, "a panicking Describe")
	if d, err := c.Describe(ctx, &lineratev1.DescribeRequest{}); err != nil || d.HostName != "still-here" {
		t.Fatalf("the Describe after the panic: %v, %v", d, err)
	}
	w, err := c.Watch(ctx, &lineratev1.WatchRequest{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = w.Recv()
	wantCode(t, err, codes.Internal, "a panicking Watch")
	w, err = c.Watch(ctx, &lineratev1.WatchRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Recv(); err != nil {
		t.Fatalf("the Watch after the panic: %v", err)
	}
	out := logs.String()
	for _, want := range []string{
		"panic in a gRPC handler", "method=/linerate.v1.Agent/Describe", "caller=\"coord at 127.0.0.1:",
		"index out of range", "recovery_test.go", // the value and the stack
		"method=/linerate.v1.Agent/Watch", "panic=\"watch exploded\"",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the log lacks %q:\n%s", want, out)
		}
	}
}
