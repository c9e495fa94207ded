package mtls

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"

	"google.golang.org/grpc/credentials"
)

// Reloader is gRPC transport credentials read from a certificate
// directory that can be read again (Reload, which an agent calls on
// SIGHUP): every handshake after a reload uses the new certificate, CA
// and revocation list, and a reload that fails keeps the previous ones.
// A server's Reload also closes the connections of peers the new list
// revokes.
type Reloader struct {
	o      Options
	server bool
	cur    *atomic.Pointer[material]
	conns  *connSet
}

// material is one reading of the directory.
type material struct {
	id    *Identity
	crl   *Revocations
	creds credentials.TransportCredentials
}

// NewServerReloader reads o's directory for a server (o.Insecure is not
// allowed: there is nothing to reload).
func NewServerReloader(o Options) (*Reloader, error) { return newReloader(o, true) }

// NewClientReloader reads o's directory for a client of o.ServerName.
func NewClientReloader(o Options) (*Reloader, error) { return newReloader(o, false) }

func newReloader(o Options, server bool) (*Reloader, error) {
	if o.Insecure {
		return nil, fmt.Errorf("reloadable credentials need a certificate directory, not --insecure: %w", ErrNoTLS)
	}
	if err := o.check(); err != nil {
		return nil, err
	}
	r := &Reloader{o: o, server: server, cur: &atomic.Pointer[material]{}, conns: &connSet{m: map[*trackedConn]bool{}}}
	m, err := r.load()
	if err != nil {
		return nil, err
	}
	r.cur.Store(m)
	return r, nil
}

// load reads and checks the directory: its safety (CheckServingDir), the
// identity, the revocation list, and that the identity is not revoked.
func (r *Reloader) load() (*material, error) {
	if err := CheckServingDir(r.o.Dir, r.o.Name, r.o.AllowCAKey); err != nil {
		return nil, err
	}
	id, err := Load(r.o.Dir, r.o.Name)
	if err != nil {
		return nil, err
	}
	crl, err := LoadRevocations(r.o.Dir, id.CA)
	if err != nil {
		return nil, err
	}
	if crl.Revoked(id.Cert.Leaf.SerialNumber) {
		return nil, fmt.Errorf("load %q: serial %s is on %s: renew it with `linerate certs renew %s`: %w",
			r.o.Name, Serial(id.Cert.Leaf.SerialNumber), CRLFile, r.o.Name, ErrRevoked)
	}
	var cfg *tls.Config
	if r.server {
		cfg = id.ServerConfig()
	} else {
		cfg = id.ClientConfig(r.o.ServerName)
	}
	cfg.VerifyConnection = verifyPeer(r.o.PeerRoles, crl)
	return &material{id: id, crl: crl, creds: credentials.NewTLS(cfg)}, nil
}

// Reload reads the directory again. On success new handshakes use what it
// read and a server closes the connections of now revoked peers; on
// error nothing changes. It returns the identity now in use and how many
// serials are revoked.
func (r *Reloader) Reload() (*Identity, int, error) {
	m, err := r.load()
	if err != nil {
		return nil, 0, err
	}
	r.cur.Store(m)
	r.conns.closeRevoked(m.crl)
	return m.id, m.crl.Len(), nil
}

// Identity is the identity in use.
func (r *Reloader) Identity() *Identity { return r.cur.Load().id }

// ClientHandshake implements credentials.TransportCredentials.
func (r *Reloader) ClientHandshake(ctx context.Context, authority string, raw net.Conn) (net.Conn, credentials.AuthInfo, error) {
	return r.cur.Load().creds.ClientHandshake(ctx, authority, raw)
}

// ServerHandshake implements credentials.TransportCredentials; the
// connection is tracked so a reload can close it if its peer is revoked.
func (r *Reloader) ServerHandshake(raw net.Conn) (net.Conn, credentials.AuthInfo, error) {
	conn, info, err := r.cur.Load().creds.ServerHandshake(raw)
	if err != nil {
		return conn, info, err
	}
	ti, ok := info.(credentials.TLSInfo)
	if !ok || len(ti.State.PeerCertificates) == 0 {
		return conn, info, nil
	}
	return r.conns.track(conn, ti.State.PeerCertificates[0]), info, nil
}

// Info implements credentials.TransportCredentials.
func (r *Reloader) Info() credentials.ProtocolInfo { return r.cur.Load().creds.Info() }

// Clone implements credentials.TransportCredentials: the clone shares
// the reloadable state, so a reload reaches it too.
func (r *Reloader) Clone() credentials.TransportCredentials {
	c := *r
	return &c
}

// OverrideServerName implements the deprecated part of
// credentials.TransportCredentials; the server name is Options.ServerName.
func (r *Reloader) OverrideServerName(string) error {
	return errors.New("mtls: OverrideServerName is not supported; set Options.ServerName")
}

// verifyPeer fails a handshake whose verified peer is revoked or, when
// roles are given, carries another role.
func verifyPeer(roles []Role, crl *Revocations) func(tls.ConnectionState) error {
	requireRole := RequirePeerRole(roles...)
	return func(cs tls.ConnectionState) error {
		if len(cs.VerifiedChains) == 0 || len(cs.VerifiedChains[0]) == 0 {
			return fmt.Errorf("no verified peer certificate: %w", ErrPeerRole)
		}
		leaf := cs.VerifiedChains[0][0]
		if crl.Revoked(leaf.SerialNumber) {
			return fmt.Errorf("peer %q: serial %s: %w", leaf.Subject.CommonName, Serial(leaf.SerialNumber), ErrRevoked)
		}
		if len(roles) == 0 {
			return nil
		}
		return requireRole(cs)
	}
}

// connSet tracks a server's live connections by peer certificate.
type connSet struct {
	mu sync.Mutex
	m  map[*trackedConn]bool
}

type trackedConn struct {
	net.Conn
	peer *x509.Certificate
	set  *connSet
	once sync.Once
}

func (s *connSet) track(c net.Conn, peer *x509.Certificate) net.Conn {
	t := &trackedConn{Conn: c, peer: peer, set: s}
	s.mu.Lock()
	s.m[t] = true
	s.mu.Unlock()
	return t
}

func (s *connSet) closeRevoked(crl *Revocations) {
	s.mu.Lock()
	var revoked []*trackedConn
	for c := range s.m {
		if crl.Revoked(c.peer.SerialNumber) {
			revoked = append(revoked, c)
		}
	}
	s.mu.Unlock()
	for _, c := range revoked {
		_ = c.Close()
	}
}

// Close closes the connection and forgets it.
func (c *trackedConn) Close() error {
	c.once.Do(func() {
		c.set.mu.Lock()
		delete(c.set.m, c)
		c.set.mu.Unlock()
	})
	return c.Conn.Close()
}
