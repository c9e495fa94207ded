package agent

import (
	"context"
	"runtime/debug"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	"github.com/linerate/linerate/internal/cluster/mtls"
)

// recovery turns a handler's panic into codes.Internal and an error log
// line (method, caller, panic value, stack): one bad request costs its
// caller an error, never the agent.
type recovery struct{ log hclog.Logger }

// recovered logs a panic value p of method and is the status its caller
// gets.
func (r recovery) recovered(ctx context.Context, method string, p any) error {
	caller := "unknown"
	if pr, err := mtls.PeerFromContext(ctx); err == nil {
		caller = pr.Name + " at " + pr.Addr
	} else if p, ok := peer.FromContext(ctx); ok && p.Addr != nil {
		caller = p.Addr.String() // plaintext (--insecure)
	}
	r.log.Error("panic in a gRPC handler: answered Internal, the agent keeps serving",
		"method", method, "caller", caller, "panic", p, "stack", string(debug.Stack()))
	return status.Errorf(codes.Internal, "%s: internal error (a panic, logged by the agent): %v", method, p)
}

func (r recovery) unary(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (resp any, err error) {
	defer func() {
		if p := recover(); p != nil {
			resp, err = nil, r.recovered(ctx, info.FullMethod, p)
		}
	}()
	return handler(ctx, req)
}

func (r recovery) stream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = r.recovered(ss.Context(), info.FullMethod, p)
		}
	}()
	return handler(srv, ss)
}
