package mtls

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/linerate/linerate/internal/enum"
)

// Role is what a certificate's holder is in the cluster.
type Role string

// The roles a leaf certificate can carry.
const (
	RoleAgent       Role = "agent"
	RoleCoordinator Role = "coordinator"
)

// Roles lists the valid roles, for messages and flag help.
func Roles() []Role { return []Role{RoleAgent, RoleCoordinator} }

// Sentinel errors callers branch on.
var (
	// ErrRole is returned for a role that is not one of Roles(), or a
	// certificate without exactly one.
	ErrRole = errors.New("invalid role")
	// ErrName is returned for a certificate name that cannot be a file name or
	// is reserved.
	ErrName = errors.New("invalid certificate name")
	// ErrHost is returned for a SAN that is neither an IP address nor a DNS
	// name.
	ErrHost = errors.New("invalid host")
	// ErrExist is returned when a file would be overwritten and force was not
	// given.
	ErrExist = errors.New("file exists")
)

// ParseRole checks s is a valid role.
func ParseRole(s string) (Role, error) {
	for _, r := range Roles() {
		if s == string(r) {
			return r, nil
		}
	}
	return "", fmt.Errorf("role %q: valid roles are %s: %w", s, enum.And(Roles()), ErrRole)
}

// roleScheme and roleHost make the URI SAN linerate://role/<role>.
const (
	roleScheme = "linerate"
	roleHost   = "role"
)

// URI is the URI SAN that carries the role in a leaf certificate.
func (r Role) URI() *url.URL {
	return &url.URL{Scheme: roleScheme, Host: roleHost, Path: "/" + string(r)}
}

// RoleOf reads the role from a leaf certificate's URI SAN.
func RoleOf(cert *x509.Certificate) (Role, error) {
	var found []Role
	for _, u := range cert.URIs {
		if u.Scheme == roleScheme && u.Host == roleHost {
			r, err := ParseRole(strings.TrimPrefix(u.Path, "/"))
			if err != nil {
				return "", fmt.Errorf("certificate %q: URI %s: %w", cert.Subject.CommonName, u, err)
			}
			found = append(found, r)
		}
	}
	if len(found) != 1 {
		return "", fmt.Errorf("certificate %q has %d %s://%s/ URIs, want one: %w", cert.Subject.CommonName, len(found), roleScheme, roleHost, ErrRole)
	}
	return found[0], nil
}

// Default validities. Leaves are short-lived (renew with `linerate certs
// renew`, reload with SIGHUP); the CA, whose key stays off the hosts and
// whose replacement means re-issuing everything, lives ten years.
const (
	DefaultCAValidity   = 10 * 365 * 24 * time.Hour
	DefaultLeafValidity = 90 * 24 * time.Hour
	// ExpiryWarning is how close to its end a served certificate makes
	// the agent warn at start and at every reload.
	ExpiryWarning = 30 * 24 * time.Hour
	// backdate covers clocks a little behind the issuer's.
	backdate = time.Hour
)

// CA is a certificate authority: its certificate and private key.
type CA struct {
	Cert *x509.Certificate
	Key  *ecdsa.PrivateKey
}

// CAOptions configure IssueCA.
type CAOptions struct {
	CommonName string        // default "linerate CA"
	Validity   time.Duration // default DefaultCAValidity
	Now        func() time.Time
}

// Leaf is an issued certificate with its private key.
type Leaf struct {
	Cert *x509.Certificate
	Key  *ecdsa.PrivateKey
}

// Describe says who a certificate is for, for people: its role, name,
// end of validity, names (SANs) and serial, as `certs issue` and `certs
// renew` print it.
func Describe(c *x509.Certificate) string {
	var sans []string
	sans = append(sans, c.DNSNames...)
	for _, ip := range c.IPAddresses {
		sans = append(sans, ip.String())
	}
	names := strings.Join(sans, ", ")
	if names == "" {
		names = "none"
	}
	role, _ := RoleOf(c)
	return fmt.Sprintf("%s %q valid until %s, names: %s, serial %s", role, c.Subject.CommonName,
		c.NotAfter.UTC().Format(time.DateOnly), names, Serial(c.SerialNumber))
}

// LeafOptions configure IssueLeaf.
type LeafOptions struct {
	// Name is the subject's common name and the file name in a certificate
	// directory; when it is a DNS name it is a DNS SAN too, so a client can
	// dial the holder by name.
	Name string
	Role Role
	// Hosts are more SANs: IP addresses and DNS names the holder serves on.
	Hosts []string
	// Validity defaults to DefaultLeafValidity and never outlasts the CA.
	Validity time.Duration
	Now      func() time.Time
}

// IssueCA creates a self-signed CA with a new ECDSA P-256 key.
func IssueCA(o CAOptions) (*CA, error) {
	if o.CommonName == "" {
		o.CommonName = "linerate CA"
	}
	if o.Validity <= 0 {
		o.Validity = DefaultCAValidity
	}
	now := nowFunc(o.Now)()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("issue CA: generate key: %w", err)
	}
	serial, err := newSerial()
	if err != nil {
		return nil, fmt.Errorf("issue CA: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: o.CommonName, Organization: []string{"linerate"}},
		NotBefore:             now.Add(-backdate),
		NotAfter:              now.Add(o.Validity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("issue CA %q: %w", o.CommonName, err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("issue CA %q: parse the new certificate: %w", o.CommonName, err)
	}
	return &CA{Cert: cert, Key: key}, nil
}

// IssueLeaf creates a certificate for one agent or coordinator, signed by
// ca, usable for both TLS server and client authentication.
func (ca *CA) IssueLeaf(o LeafOptions) (*Leaf, error) {
	if err := CheckName(o.Name); err != nil {
		return nil, err
	}
	if _, err := ParseRole(string(o.Role)); err != nil {
		return nil, fmt.Errorf("issue %q: %w", o.Name, err)
	}
	if err := checkVerifiableName(o.Name, o.Role); err != nil {
		return nil, err
	}
	if o.Validity <= 0 {
		o.Validity = DefaultLeafValidity
	}
	var dns []string
	var ips []net.IP
	seen := map[string]bool{}
	for _, h := range append([]string{o.Name}, o.Hosts...) {
		h = strings.TrimSpace(h)
		switch {
		case h == "" || seen[h]:
			continue
		case net.ParseIP(h) != nil:
			ips = append(ips, net.ParseIP(h))
		case isDNSName(h):
			dns = append(dns, h)
		case h == o.Name:
			// A name that is no DNS name is only the common name.
		default:
			return nil, fmt.Errorf("issue %q: host %q is neither an IP address nor a DNS name: %w", o.Name, h, ErrHost)
		}
		seen[h] = true
	}
	now := nowFunc(o.Now)()
	notAfter := now.Add(o.Validity)
	if notAfter.After(ca.Cert.NotAfter) {
		notAfter = ca.Cert.NotAfter
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("issue %q: generate key: %w", o.Name, err)
	}
	serial, err := newSerial()
	if err != nil {
		return nil, fmt.Errorf("issue %q: %w", o.Name, err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject: pkix.Name{
			CommonName:         o.Name,
			Organization:       []string{"linerate"},
			OrganizationalUnit: []string{string(o.Role)},
		},
		NotBefore:             now.Add(-backdate),
		NotAfter:              notAfter,
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		BasicConstraintsValid: true,
		DNSNames:              dns,
		IPAddresses:           ips,
		URIs:                  []*url.URL{o.Role.URI()},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, &key.PublicKey, ca.Key)
	if err != nil {
		return nil, fmt.Errorf("issue %q: %w", o.Name, err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("issue %q: parse the new certificate: %w", o.Name, err)
	}
	return &Leaf{Cert: cert, Key: key}, nil
}

// Pool is a certificate pool holding only the CA.
func (ca *CA) Pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.Cert)
	return p
}

// CertPEM is the CA certificate as PEM.
func (ca *CA) CertPEM() []byte { return certPEM(ca.Cert) }

// KeyPEM is the CA key as PKCS #8 PEM.
func (ca *CA) KeyPEM() ([]byte, error) { return keyPEM(ca.Key) }

// CertPEM is the leaf certificate as PEM.
func (l *Leaf) CertPEM() []byte { return certPEM(l.Cert) }

// KeyPEM is the leaf key as PKCS #8 PEM.
func (l *Leaf) KeyPEM() ([]byte, error) { return keyPEM(l.Key) }

// TLSCertificate is the leaf as crypto/tls wants it.
func (l *Leaf) TLSCertificate() tls.Certificate {
	return tls.Certificate{Certificate: [][]byte{l.Cert.Raw}, PrivateKey: l.Key, Leaf: l.Cert}
}

func certPEM(c *x509.Certificate) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})
}

func keyPEM(k *ecdsa.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		return nil, fmt.Errorf("marshal private key: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}

func newSerial() (*big.Int, error) {
	s, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, fmt.Errorf("serial number: %w", err)
	}
	return s.Add(s, big.NewInt(1)), nil
}

func nowFunc(f func() time.Time) func() time.Time {
	if f == nil {
		return time.Now
	}
	return f
}

// CheckName accepts the names a certificate directory can hold: letters,
// digits, '.', '_' and '-', starting with a letter or digit, at most 63
// characters, and not "ca" (the CA's own files).
func CheckName(name string) error {
	if !validName(name) {
		return fmt.Errorf("name %q: want 1-63 letters, digits, '.', '_' or '-', starting with a letter or digit: %w", name, ErrName)
	}
	if strings.EqualFold(name, "ca") {
		return fmt.Errorf("name %q is the CA's own file name; pick another: %w", name, ErrName)
	}
	return nil
}

// checkVerifiableName refuses an agent name TLS could never verify: the
// coordinator dials an agent with its node name as the TLS server name,
// which must match a DNS name (or IP address) SAN of the agent's
// certificate, and a name with '_' (or a label starting or ending with
// '-') is no DNS name.
func checkVerifiableName(name string, role Role) error {
	if role != RoleAgent || isDNSName(name) || net.ParseIP(name) != nil {
		return nil
	}
	return fmt.Errorf("agent name %q is not a DNS name (dot-separated labels of letters, digits and inner '-'; no '_'), so no certificate can carry it as a SAN and the coordinator, which verifies an agent's certificate against its node name, could never connect; rename the node (agent --name) to e.g. %q: %w",
		name, suggestDNSName(name), ErrName)
}

// suggestDNSName is name with every character a DNS label cannot hold
// replaced by '-'.
func suggestDNSName(name string) string {
	b := []byte(name)
	for i, c := range b {
		if !alnum(c) && c != '.' && c != '-' {
			b[i] = '-'
		}
	}
	labels := strings.Split(string(b), ".")
	for i, l := range labels {
		labels[i] = strings.Trim(l, "-")
	}
	return strings.Join(labels, ".")
}

func validName(name string) bool {
	if name == "" || len(name) > 63 || !alnum(name[0]) {
		return false
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; !alnum(c) && c != '.' && c != '_' && c != '-' {
			return false
		}
	}
	return true
}

// isDNSName reports whether s is dot-separated labels of letters, digits
// and inner hyphens.
func isDNSName(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	for _, label := range strings.Split(s, ".") {
		if label == "" || len(label) > 63 || !alnum(label[0]) || !alnum(label[len(label)-1]) {
			return false
		}
		for i := 0; i < len(label); i++ {
			if c := label[i]; !alnum(c) && c != '-' {
				return false
			}
		}
	}
	return true
}

func alnum(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' }
