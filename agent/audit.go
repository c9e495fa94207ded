package agent

import (
	"context"
	"strings"
	"sync"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	lineratev1 "github.com/linerate/linerate/proto/linerate/v1"
)

// readOnly are the Agent methods that change nothing and need no lease:
// every other Agent method is audited.
var readOnly = map[string]bool{"Describe": true, "Watch": true}

// auditInterceptor writes one audit line for every state-changing Agent
// call: the method, the caller's certificate name, its address, the lease
// outcome (accepted, or refused and why) and the call's result. With TLS
// (insecure false) a call without a verified client certificate is
// refused here, before any handler runs.
func auditInterceptor(log hclog.Logger, insecure bool) grpc.UnaryServerInterceptor {
	prefix := "/" + lineratev1.Agent_ServiceDesc.ServiceName + "/"
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		method, ok := strings.CutPrefix(info.FullMethod, prefix)
		if !ok || readOnly[method] {
			return handler(ctx, req)
		}
		who := callerOf(ctx)
		if who.name == "" && !insecure {
			err := status.Error(codes.Unauthenticated, "no verified client certificate: this agent serves mutual TLS only")
			log.Warn("audit", "method", method, "caller", who.display(), "peer", who.addr, "lease", "refused: no certificate", "code", codes.Unauthenticated.String())
			return nil, err
		}
		n := &leaseNote{}
		resp, err := handler(context.WithValue(ctx, leaseNoteKey{}, n), req)
		args := []any{"method", method, "caller", who.display(), "peer", who.addr, "lease", n.outcome(), "code", status.Code(err).String()}
		if err != nil {
			args = append(args, "error", status.Convert(err).Message())
		}
		log.Info("audit", args...)
		return resp, err
	}
}

// leaseNote is what the lease check of one call decided, for its audit
// line.
type leaseNote struct {
	mu     sync.Mutex
	set    bool
	reason string // "" accepted, else why refused
}

type leaseNoteKey struct{}

// noteLease records the lease check of the call of ctx: err nil is
// accepted. Outside an audited call it does nothing.
func noteLease(ctx context.Context, err error) {
	n, _ := ctx.Value(leaseNoteKey{}).(*leaseNote)
	if n == nil {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.set, n.reason = true, ""
	if err != nil {
		n.reason = err.Error()
	}
}

// outcome is the lease outcome as the audit line tells it.
func (n *leaseNote) outcome() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	switch {
	case !n.set:
		return "not checked (refused before the lease was looked at)"
	case n.reason == "":
		return "accepted"
	}
	return "refused: " + n.reason
}
