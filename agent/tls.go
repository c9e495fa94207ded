package agent

import (
	"errors"
	"fmt"
	"time"

	"google.golang.org/grpc/credentials"

	"github.com/linerate/linerate/internal/cluster/mtls"
)

// checkTLSDir refuses, before anything starts, a certificate directory
// that holds ca.key or an exposed key (mtls.CheckServingDir); Start and
// every reload check it again.
func checkTLSDir(cfg Config) error {
	if cfg.Insecure || cfg.TLSDir == "" {
		return nil
	}
	if err := mtls.CheckServingDir(cfg.TLSDir, cfg.TLSName, cfg.AllowCAKey); err != nil {
		return fmt.Errorf("agent certificates: %w", err)
	}
	return nil
}

// serverCredentials are the gRPC server's: plaintext with Insecure, or
// certificates from TLSDir that ReloadTLS can replace.
func (a *Agent) serverCredentials() (credentials.TransportCredentials, error) {
	o := mtls.Options{
		Dir: a.cfg.TLSDir, Name: a.cfg.TLSName, Insecure: a.cfg.Insecure, AllowCAKey: a.cfg.AllowCAKey,
		PeerRoles: servedRoles, // another agent only for Describe (peers.go)
	}
	if a.cfg.Insecure {
		return mtls.ServerCredentials(o)
	}
	r, err := mtls.NewServerReloader(o)
	if err != nil {
		return nil, err
	}
	a.mu.Lock()
	a.tls = r
	a.mu.Unlock()
	a.logCertificate("serving certificate", r.Identity())
	return r, nil
}

// ErrNoTLSReload is returned by ReloadTLS for an agent without
// certificates (--insecure) or not started.
var ErrNoTLSReload = errors.New("no certificates to reload")

// ReloadTLS reads the certificate directory again (what SIGHUP does):
// the agent's certificate, the CA and the revocation list. New
// connections use what it read, and open connections of coordinators the
// list now revokes are closed. On error the previous certificates stay
// in use, and the error is logged and returned.
func (a *Agent) ReloadTLS() error {
	a.mu.Lock()
	r := a.tls
	a.mu.Unlock()
	if r == nil {
		err := fmt.Errorf("reload certificates: %w (the agent serves without TLS or has not started)", ErrNoTLSReload)
		a.log.Warn(err.Error())
		return err
	}
	id, revoked, err := r.Reload()
	if err != nil {
		a.log.Error("certificate reload failed: still serving the previous certificate", "dir", a.cfg.TLSDir, "error", err)
		return fmt.Errorf("reload certificates from %s: %w", a.cfg.TLSDir, err)
	}
	a.logCertificate("reloaded certificates", id, "revoked_serials", revoked)
	return nil
}

// logCertificate logs the certificate in use, and warns when it ends
// within mtls.ExpiryWarning.
func (a *Agent) logCertificate(msg string, id *mtls.Identity, kv ...any) {
	leaf := id.Cert.Leaf
	args := append([]any{"name", id.Name, "serial", mtls.Serial(leaf.SerialNumber), "not_after", leaf.NotAfter.UTC().Format(time.RFC3339)}, kv...)
	a.log.Info(msg, args...)
	if left := time.Until(leaf.NotAfter); left < mtls.ExpiryWarning {
		a.log.Warn(fmt.Sprintf("certificate expires in %s: renew it with `linerate certs renew --dir DIR %s` where ca.key is, copy the pair here and send SIGHUP", left.Round(time.Hour), id.Name),
			"name", id.Name, "not_after", leaf.NotAfter.UTC().Format(time.RFC3339))
	}
}
