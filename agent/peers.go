package agent

import (
	"context"
	"errors"
	"slices"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"github.com/linerate/linerate/internal/cluster/mtls"
	lineratev1 "github.com/linerate/linerate/proto/linerate/v1"
)

// Who may call what. The TLS handshake admits coordinators and agents of
// the agent's CA (servedRoles); coordinators may call everything, and
// another agent only what is read-only (agentCallable): a sender confirms
// a receiver's data addresses and MAC with Describe before it sends there
// (targets.go). With --insecure there is no certificate to tell them
// apart, and every caller is trusted, as the insecure warning says.

// servedRoles are the certificate roles the Agent service's handshake
// admits.
var servedRoles = []mtls.Role{mtls.RoleCoordinator, mtls.RoleAgent}

// agentCallable are the methods a caller with an agent's certificate may
// call.
var agentCallable = []string{
	lineratev1.Agent_Describe_FullMethodName,
	healthpb.Health_Check_FullMethodName, healthpb.Health_List_FullMethodName, healthpb.Health_Watch_FullMethodName,
}

// allowCaller refuses a call of method from an agent's certificate
// unless agentCallable lists it.
func allowCaller(ctx context.Context, method string) error {
	p, err := mtls.PeerFromContext(ctx)
	if errors.Is(err, mtls.ErrNoPeer) {
		return nil // plaintext (--insecure)
	}
	if err != nil {
		return status.Errorf(codes.PermissionDenied, "%s: the caller's certificate: %v", method, err)
	}
	if p.Role == mtls.RoleAgent && !slices.Contains(agentCallable, method) {
		return status.Errorf(codes.PermissionDenied, "%s: refused to agent %q: another agent's certificate may call only Describe; every other call takes a coordinator's certificate", method, p.Name)
	}
	return nil
}

// callerUnary and callerStream refuse a call its caller's role may not
// make (allowCaller).
func callerUnary(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	if err := allowCaller(ctx, info.FullMethod); err != nil {
		return nil, err
	}
	return handler(ctx, req)
}

func callerStream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	if err := allowCaller(ss.Context(), info.FullMethod); err != nil {
		return err
	}
	return handler(srv, ss)
}
