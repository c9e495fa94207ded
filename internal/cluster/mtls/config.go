package mtls

import (
	"crypto/tls"
	"errors"
	"fmt"
	"slices"
)

// ServerTLS loads name's certificate from dir and returns a server
// configuration: TLS 1.3 only, and a client certificate signed by dir's CA
// required and verified. It neither checks the directory
// (CheckServingDir) nor the revocation list: processes serve with
// ServerCredentials, which does both.
func ServerTLS(dir, name string) (*tls.Config, error) {
	id, err := Load(dir, name)
	if err != nil {
		return nil, err
	}
	return id.ServerConfig(), nil
}

// ClientTLS loads name's certificate from dir and returns a client
// configuration: TLS 1.3 only, presenting that certificate, trusting only
// dir's CA, and verifying that the server's certificate names serverName
// (a DNS name or IP address among its SANs; an agent's certificate names
// the agent).
func ClientTLS(dir, name, serverName string) (*tls.Config, error) {
	id, err := Load(dir, name)
	if err != nil {
		return nil, err
	}
	return id.ClientConfig(serverName), nil
}

// ServerConfig is ServerTLS for a loaded identity.
func (id *Identity) ServerConfig() *tls.Config {
	return &tls.Config{
		MinVersion:   tls.VersionTLS13,
		Certificates: []tls.Certificate{id.Cert},
		ClientCAs:    id.CAs,
		ClientAuth:   tls.RequireAndVerifyClientCert,
	}
}

// ClientConfig is ClientTLS for a loaded identity.
func (id *Identity) ClientConfig(serverName string) *tls.Config {
	return &tls.Config{
		MinVersion:   tls.VersionTLS13,
		Certificates: []tls.Certificate{id.Cert},
		RootCAs:      id.CAs,
		ServerName:   serverName,
	}
}

// ErrPeerRole is returned when the peer's certificate is valid but carries
// a role this end does not talk to (an agent's certificate used to drive
// another agent).
var ErrPeerRole = errors.New("peer role not allowed")

// RequirePeerRole returns a tls.Config.VerifyConnection hook that fails the
// handshake unless the peer's verified certificate carries one of roles.
// It runs after chain verification, so it only sees CA-signed peers.
func RequirePeerRole(roles ...Role) func(tls.ConnectionState) error {
	return func(cs tls.ConnectionState) error {
		if len(cs.VerifiedChains) == 0 || len(cs.VerifiedChains[0]) == 0 {
			return fmt.Errorf("no verified peer certificate: %w", ErrPeerRole)
		}
		leaf := cs.VerifiedChains[0][0]
		role, err := RoleOf(leaf)
		if err != nil {
			return fmt.Errorf("peer %q: %w", leaf.Subject.CommonName, err)
		}
		if !slices.Contains(roles, role) {
			return fmt.Errorf("peer %q is a %s, want %v: %w", leaf.Subject.CommonName, role, roles, ErrPeerRole)
		}
		return nil
	}
}
