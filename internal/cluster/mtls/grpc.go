package mtls

import (
	"context"
	"errors"
	"fmt"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/peer"
)

// Options pick one gRPC endpoint's transport security, as the --tls-dir
// and --insecure flags give it.
type Options struct {
	// Dir is the certificate directory (`linerate certs init|issue`).
	Dir string
	// Name is this endpoint's certificate in Dir.
	Name string
	// ServerName is what a client expects the server's certificate to
	// name; clients only.
	ServerName string
	// PeerRoles, when set, refuse peers whose certificate carries another
	// role: an agent accepts only coordinators, a coordinator only agents.
	PeerRoles []Role
	// AllowCAKey serves or dials from a directory that holds ca.key (the
	// CA's own machine, a lab); otherwise that is refused (ErrUnsafe).
	AllowCAKey bool
	// Insecure serves or dials plaintext: no certificates, anyone who
	// reaches the port is trusted. Only on explicit request; a caller that
	// sets it logs InsecureWarning every time it starts.
	Insecure bool
}

// InsecureWarning is what a process running with Options.Insecure logs.
const InsecureWarning = "gRPC without TLS (--insecure): any host that reaches this port can drive the agent and read its results; use --tls-dir with certificates from `linerate certs`"

// ErrNoTLS is returned when there is neither a certificate directory nor
// an explicit insecure mode.
var ErrNoTLS = errors.New("no TLS configuration")

func (o Options) check() error {
	switch {
	case o.Insecure && o.Dir != "":
		return fmt.Errorf("both a certificate directory (%s) and insecure mode: pick one: %w", o.Dir, ErrNoTLS)
	case o.Insecure:
		return nil
	case o.Dir == "" || o.Name == "":
		return fmt.Errorf("gRPC needs a certificate directory and a certificate name (--tls-dir DIR with NAME.crt from `linerate certs issue`), or an explicit --insecure: %w", ErrNoTLS)
	}
	return nil
}

// ServerCredentials are the transport credentials of a gRPC server:
// ServerTLS with PeerRoles and the CA's revocation list enforced, from a
// directory CheckServingDir accepts (a Reloader), or, only with
// Insecure, plaintext.
func ServerCredentials(o Options) (credentials.TransportCredentials, error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	if o.Insecure {
		return insecure.NewCredentials(), nil
	}
	return NewServerReloader(o)
}

// ClientCredentials are the transport credentials of a gRPC client:
// ClientTLS for o.ServerName with PeerRoles and the revocation list
// enforced, from a directory CheckServingDir accepts, or, only with
// Insecure, plaintext. They are read when called: a coordinator that
// builds them per dial picks up a renewed certificate or a new ca.crl at
// its next dial.
func ClientCredentials(o Options) (credentials.TransportCredentials, error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	if o.Insecure {
		return insecure.NewCredentials(), nil
	}
	if o.ServerName == "" {
		return nil, fmt.Errorf("client of %s: no server name to verify the server's certificate against", o.Name)
	}
	return NewClientReloader(o)
}

// These are the keepalive settings. Clients ping an idle connection every
// ClientPingInterval, so a dead agent or coordinator is noticed within
// seconds, and servers allow pings that often (grpc's default enforcement,
// 5 minutes, would answer them with GOAWAY). Both ends take the pair from
// here so they agree.
const (
	ClientPingInterval = 15 * time.Second
	pingTimeout        = 5 * time.Second
	serverMinPing      = 10 * time.Second
)

// Limits of every linerate gRPC server: what one client can make it hold.
const (
	// MaxRecvMsgSize is the largest request accepted (a larger one is
	// answered ResourceExhausted before it is decoded): the largest
	// legitimate one, a Configure with a destination per thread for
	// thousands of threads, is a few hundred KiB.
	MaxRecvMsgSize = 1 << 20
	// MaxSendMsgSize is the largest answer sent: the clients' default
	// receive limit (4 MiB), so an answer too large fails at the server
	// with a status instead of after it was built and sent.
	MaxSendMsgSize = 4 << 20
	// MaxConcurrentStreams is how many calls one connection may have
	// open at once: a coordinator has a Watch and a few calls per agent
	// in flight.
	MaxConcurrentStreams = 64
	// ConnectionTimeout bounds a new connection's TLS handshake: a client
	// that connects and says nothing is dropped.
	ConnectionTimeout = 10 * time.Second
)

// ServerOptions are the options every linerate gRPC server uses: creds,
// the limits above and a keepalive policy that matches DialOptions.
func ServerOptions(creds credentials.TransportCredentials) []grpc.ServerOption {
	return []grpc.ServerOption{
		grpc.Creds(creds),
		grpc.MaxRecvMsgSize(MaxRecvMsgSize),
		grpc.MaxSendMsgSize(MaxSendMsgSize),
		grpc.MaxConcurrentStreams(MaxConcurrentStreams),
		grpc.ConnectionTimeout(ConnectionTimeout),
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: serverMinPing, PermitWithoutStream: true}),
		grpc.KeepaliveParams(keepalive.ServerParameters{Time: ClientPingInterval, Timeout: pingTimeout}),
	}
}

// DialOptions are the options every linerate gRPC client uses: creds and
// keepalive pings that ServerOptions permits.
func DialOptions(creds credentials.TransportCredentials) []grpc.DialOption {
	return []grpc.DialOption{
		grpc.WithTransportCredentials(creds),
		grpc.WithKeepaliveParams(keepalive.ClientParameters{Time: ClientPingInterval, Timeout: pingTimeout, PermitWithoutStream: true}),
	}
}

// Peer is who called, from the verified client certificate.
type Peer struct {
	Name string // the certificate's common name
	Role Role
	Addr string
}

// ErrNoPeer is returned when the call did not come over mutual TLS
// (plaintext, or no client certificate).
var ErrNoPeer = errors.New("no verified peer certificate")

// PeerFromContext tells a server handler who is calling.
func PeerFromContext(ctx context.Context) (Peer, error) {
	p, ok := peer.FromContext(ctx)
	if !ok {
		return Peer{}, fmt.Errorf("no peer in context: %w", ErrNoPeer)
	}
	out := Peer{}
	if p.Addr != nil {
		out.Addr = p.Addr.String()
	}
	info, ok := p.AuthInfo.(credentials.TLSInfo)
	if !ok || len(info.State.VerifiedChains) == 0 || len(info.State.VerifiedChains[0]) == 0 {
		return out, fmt.Errorf("peer %s: %w", out.Addr, ErrNoPeer)
	}
	leaf := info.State.VerifiedChains[0][0]
	out.Name = leaf.Subject.CommonName
	role, err := RoleOf(leaf)
	if err != nil {
		return out, fmt.Errorf("peer %s: %w", out.Addr, err)
	}
	out.Role = role
	return out, nil
}
