package coordinator

import (
	"fmt"

	"google.golang.org/grpc"

	"github.com/linerate/linerate/internal/cluster/mtls"
)

// Dialer opens a gRPC connection to an agent.
type Dialer func(m Member) (*grpc.ClientConn, error)

// TLSDialer dials agents with the coordinator's certificate from
// o.Dir/o.Name (or plaintext with o.Insecure). The agent's certificate
// must name the member: serf's node name is who the coordinator expects
// at the gRPC address the member announced. The directory is read at
// every dial, so a renewed certificate or a new ca.crl (an agent's
// certificate revoked) applies from the next dial on.
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
