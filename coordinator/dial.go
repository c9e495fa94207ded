package coordinator

import (
	"context"
	"fmt"
	"sync"
	"time"

	"google.golang.org/grpc"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/linerate/linerate/internal/mtls"
	lineratev1 "github.com/linerate/linerate/proto/linerate/v1"
)

// Dialer opens a gRPC connection to an agent.
type Dialer func(m Member) (*grpc.ClientConn, error)

// TLSDialer dials agents with the coordinator's certificate from
// o.Dir/o.Name (or plaintext with o.Insecure). The agent's certificate
// must name the member: serf's node name is who the coordinator expects
// at the gRPC address the member announced.
func TLSDialer(o mtls.Options) Dialer {
	return func(m Member) (*grpc.ClientConn, error) {
		if m.GRPC == "" {
			return nil, fmt.Errorf("agent %s announces no gRPC address (tag grpc)", m.Name)
		}
		oo := o
		oo.ServerName = m.Name
		oo.PeerRoles = []mtls.Role{mtls.RoleAgent}
		creds, err := mtls.ClientCredentials(oo)
		if err != nil {
			return nil, fmt.Errorf("credentials for agent %s: %w", m.Name, err)
		}
		conn, err := grpc.NewClient(m.GRPC, mtls.DialOptions(creds)...)
		if err != nil {
			return nil, fmt.Errorf("dial agent %s at %s: %w", m.Name, m.GRPC, err)
		}
		return conn, nil
	}
}

// Check asks every member's health service whether the Agent service is
// serving and fills Member.Health ("serving", or what went wrong), at
// most 8 at a time, each within timeout.
func Check(ctx context.Context, members []Member, dial Dialer, timeout time.Duration) []Member {
	out := append([]Member(nil), members...)
	sem := make(chan struct{}, 8)
	var wg sync.WaitGroup
	for i := range out {
		if out[i].Status != "alive" {
			out[i].Health = "not alive (" + out[i].Status + ")"
			continue
		}
		wg.Add(1)
		go func(m *Member) {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			m.Health = health(ctx, *m, dial, timeout)
		}(&out[i])
	}
	wg.Wait()
	return out
}

func health(ctx context.Context, m Member, dial Dialer, timeout time.Duration) string {
	conn, err := dial(m)
	if err != nil {
		return err.Error()
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	resp, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{Service: lineratev1.Agent_ServiceDesc.ServiceName})
	if err != nil {
		return fmt.Sprintf("unreachable: %v", err)
	}
	if resp.Status != healthpb.HealthCheckResponse_SERVING {
		return resp.Status.String()
	}
	return "serving"
}
