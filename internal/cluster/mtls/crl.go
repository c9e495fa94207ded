package mtls

import (
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// CRLFile is the revocation list in a certificate directory: a CRL signed
// by the directory's CA, written by `linerate certs revoke` where ca.key
// is and copied to every host beside ca.crt. Being signed, it is trusted
// for what the CA signed, whoever copied it.
const CRLFile = "ca.crl"

// ErrRevoked is returned when a certificate's serial is on the CA's
// revocation list.
var ErrRevoked = errors.New("certificate revoked")

// Revocations are the serials a CA revoked. The zero value (no ca.crl)
// revokes nothing.
type Revocations struct {
	list    *x509.RevocationList
	serials map[string]bool
}

// Revoked reports whether serial is on the list.
func (r *Revocations) Revoked(serial *big.Int) bool {
	return r != nil && serial != nil && r.serials[serial.Text(16)]
}

// Len is how many serials are revoked.
func (r *Revocations) Len() int {
	if r == nil {
		return 0
	}
	return len(r.serials)
}

// Serial formats a certificate serial as `linerate certs` prints and
// parses it: lower-case hexadecimal.
func Serial(n *big.Int) string { return n.Text(16) }

// ParseSerial parses a serial as Serial prints it (colons allowed, as
// openssl prints them).
func ParseSerial(s string) (*big.Int, error) {
	n, ok := new(big.Int).SetString(strings.ReplaceAll(s, ":", ""), 16)
	if !ok || n.Sign() <= 0 {
		return nil, fmt.Errorf("serial %q: want a positive hexadecimal number", s)
	}
	return n, nil
}

// LoadRevocations reads dir's ca.crl and checks ca signed it. A missing
// file revokes nothing; an unreadable, malformed or foreign one is an
// error (a process keeps its previous list rather than trust none).
func LoadRevocations(dir string, ca *x509.Certificate) (*Revocations, error) {
	path := filepath.Join(dir, CRLFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &Revocations{serials: map[string]bool{}}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("load revocation list: %w", err)
	}
	block, _ := pem.Decode(b)
	if block == nil || block.Type != "X509 CRL" {
		return nil, fmt.Errorf("load revocation list %s: no PEM X509 CRL block", path)
	}
	list, err := x509.ParseRevocationList(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("load revocation list %s: %w", path, err)
	}
	if err := list.CheckSignatureFrom(ca); err != nil {
		return nil, fmt.Errorf("load revocation list %s: not signed by the CA %q of %s: %w", path, ca.Subject.CommonName, filepath.Join(dir, CACertFile), err)
	}
	r := &Revocations{list: list, serials: map[string]bool{}}
	for _, e := range list.RevokedCertificateEntries {
		r.serials[e.SerialNumber.Text(16)] = true
	}
	return r, nil
}

// Revoke adds serials to dir's revocation list, signed by dir's CA (so it
// needs ca.key), and writes ca.crl (0644) atomically. It returns the
// serials that were not revoked already and the file written.
func Revoke(dir string, serials []*big.Int, now time.Time) ([]*big.Int, string, error) {
	ca, err := LoadCA(dir)
	if err != nil {
		return nil, "", err
	}
	old, err := LoadRevocations(dir, ca.Cert)
	if err != nil {
		return nil, "", err
	}
	tmpl := &x509.RevocationList{Number: big.NewInt(1), ThisUpdate: now, NextUpdate: ca.Cert.NotAfter}
	if old.list != nil {
		tmpl.RevokedCertificateEntries = old.list.RevokedCertificateEntries
		tmpl.Number = new(big.Int).Add(old.list.Number, big.NewInt(1))
	}
	var added []*big.Int
	for _, s := range serials {
		if old.Revoked(s) {
			continue
		}
		old.serials[s.Text(16)] = true
		added = append(added, s)
		tmpl.RevokedCertificateEntries = append(tmpl.RevokedCertificateEntries, x509.RevocationListEntry{SerialNumber: s, RevocationTime: now})
	}
	if !tmpl.NextUpdate.After(now) {
		return nil, "", fmt.Errorf("revoke in %s: the CA expired on %s", dir, tmpl.NextUpdate.UTC().Format(time.DateOnly))
	}
	der, err := x509.CreateRevocationList(rand.Reader, tmpl, ca.Cert, ca.Key)
	if err != nil {
		return nil, "", fmt.Errorf("revoke in %s: sign the revocation list: %w", dir, err)
	}
	path := filepath.Join(dir, CRLFile)
	if err := replace(file{path, pem.EncodeToMemory(&pem.Block{Type: "X509 CRL", Bytes: der}), certMode}); err != nil {
		return nil, "", fmt.Errorf("revoke in %s: %w", dir, err)
	}
	return added, path, nil
}
