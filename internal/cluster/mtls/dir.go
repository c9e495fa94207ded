package mtls

import (
	"crypto/ecdsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/linerate/linerate/internal/safefile"
)

// File names in a certificate directory.
const (
	CACertFile = "ca.crt"
	CAKeyFile  = "ca.key"
	certExt    = ".crt"
	keyExt     = ".key"
	certMode   = 0o644
	keyMode    = 0o600
	dirMode    = 0o700
)

// CertPath is where the certificate of name lives in dir.
func CertPath(dir, name string) string { return filepath.Join(dir, name+certExt) }

// KeyPath is where the private key of name lives in dir.
func KeyPath(dir, name string) string { return filepath.Join(dir, name+keyExt) }

// Init creates a CA in dir (created 0700 when missing): ca.crt (0644) and
// ca.key (0600). Existing CA files are an ErrExist error naming them unless
// force, which replaces them — and so orphans every certificate the old CA
// signed. It returns the CA and the files written.
func Init(dir string, o CAOptions, force bool) (*CA, []string, error) {
	ca, err := IssueCA(o)
	if err != nil {
		return nil, nil, err
	}
	key, err := ca.KeyPEM()
	if err != nil {
		return nil, nil, fmt.Errorf("init CA in %s: %w", dir, err)
	}
	files := []file{
		{filepath.Join(dir, CACertFile), ca.CertPEM(), certMode},
		{filepath.Join(dir, CAKeyFile), key, keyMode},
	}
	if err := writeFiles(dir, files, force); err != nil {
		return nil, nil, fmt.Errorf("init CA in %s: %w", dir, err)
	}
	return ca, paths(files), nil
}

// Issue issues a leaf certificate signed by dir's CA and writes NAME.crt
// (0644) and NAME.key (0600) beside it; existing files are an ErrExist
// error unless force. It returns the leaf and the files written.
func Issue(dir string, o LeafOptions, force bool) (*Leaf, []string, error) {
	if err := CheckName(o.Name); err != nil {
		return nil, nil, err
	}
	if err := checkVerifiableName(o.Name, o.Role); err != nil {
		return nil, nil, err
	}
	ca, err := LoadCA(dir)
	if err != nil {
		return nil, nil, err
	}
	leaf, err := ca.IssueLeaf(o)
	if err != nil {
		return nil, nil, err
	}
	key, err := leaf.KeyPEM()
	if err != nil {
		return nil, nil, fmt.Errorf("issue %q in %s: %w", o.Name, dir, err)
	}
	files := []file{
		{CertPath(dir, o.Name), leaf.CertPEM(), certMode},
		{KeyPath(dir, o.Name), key, keyMode},
	}
	if err := writeFiles(dir, files, force); err != nil {
		return nil, nil, fmt.Errorf("issue %q in %s: %w", o.Name, dir, err)
	}
	return leaf, paths(files), nil
}

// LoadCA reads dir's CA certificate and key (what issuing needs).
func LoadCA(dir string) (*CA, error) {
	cert, err := readCert(filepath.Join(dir, CACertFile))
	if err != nil {
		return nil, fmt.Errorf("load CA: %w (create one with `linerate certs init --dir %s`)", err, dir)
	}
	if !cert.IsCA {
		return nil, fmt.Errorf("load CA: %s is not a CA certificate", filepath.Join(dir, CACertFile))
	}
	keyFile := filepath.Join(dir, CAKeyFile)
	b, err := os.ReadFile(keyFile)
	if err != nil {
		return nil, fmt.Errorf("load CA key: %w", err)
	}
	key, err := parseECKey(b)
	if err != nil {
		return nil, fmt.Errorf("load CA key %s: %w", keyFile, err)
	}
	if !key.PublicKey.Equal(cert.PublicKey) {
		return nil, fmt.Errorf("load CA: %s does not belong to %s", keyFile, filepath.Join(dir, CACertFile))
	}
	return &CA{Cert: cert, Key: key}, nil
}

// LoadPool reads dir's CA certificate into a pool (what verifying needs:
// the CA key may stay elsewhere).
func LoadPool(dir string) (*x509.CertPool, error) {
	cert, err := readCert(filepath.Join(dir, CACertFile))
	if err != nil {
		return nil, fmt.Errorf("load CA: %w", err)
	}
	p := x509.NewCertPool()
	p.AddCert(cert)
	return p, nil
}

// Identity is one endpoint's credentials: its certificate and key, the
// role the certificate carries, and the CA that peers must be signed by.
type Identity struct {
	Name string
	Role Role
	Cert tls.Certificate // Leaf set
	CAs  *x509.CertPool
	CA   *x509.Certificate // the one certificate in CAs
}

// Load reads the certificate and key of name and the CA certificate from
// dir, and checks the certificate is valid now, signed by that CA, and
// carries a role.
func Load(dir, name string) (*Identity, error) {
	if err := CheckName(name); err != nil {
		return nil, err
	}
	caCert, err := readCert(filepath.Join(dir, CACertFile))
	if err != nil {
		return nil, fmt.Errorf("load CA: %w", err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(caCert)
	certFile, keyFile := CertPath(dir, name), KeyPath(dir, name)
	pair, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("load %q: %w (issue it with `linerate certs issue --dir %s --name %s --role ...`)", name, err, dir, name)
		}
		return nil, fmt.Errorf("load %q from %s and %s: %w", name, certFile, keyFile, err)
	}
	leaf := pair.Leaf
	if leaf == nil {
		if leaf, err = x509.ParseCertificate(pair.Certificate[0]); err != nil {
			return nil, fmt.Errorf("load %q: parse %s: %w", name, certFile, err)
		}
		pair.Leaf = leaf
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: pool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}}); err != nil {
		return nil, fmt.Errorf("load %q: %s does not verify against %s: %w", name, certFile, filepath.Join(dir, CACertFile), err)
	}
	role, err := RoleOf(leaf)
	if err != nil {
		return nil, fmt.Errorf("load %q: %w", name, err)
	}
	return &Identity{Name: name, Role: role, Cert: pair, CAs: pool, CA: caCert}, nil
}

// Renew re-issues name's certificate in dir with the same role and names
// (SANs) and a new key and serial, replacing NAME.crt and NAME.key. It
// returns the new leaf, the certificate it replaced, and the files
// written.
func Renew(dir, name string, validity time.Duration) (*Leaf, *x509.Certificate, []string, error) {
	if err := CheckName(name); err != nil {
		return nil, nil, nil, err
	}
	old, err := readCert(CertPath(dir, name))
	if err != nil {
		return nil, nil, nil, fmt.Errorf("renew %q: %w (issue it first with `linerate certs issue`)", name, err)
	}
	role, err := RoleOf(old)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("renew %q: %w", name, err)
	}
	hosts := slices.Clone(old.DNSNames)
	for _, ip := range old.IPAddresses {
		hosts = append(hosts, ip.String())
	}
	leaf, files, err := Issue(dir, LeafOptions{Name: name, Role: role, Hosts: hosts, Validity: validity}, true)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("renew: %w", err)
	}
	return leaf, old, files, nil
}

// ReadCertificate reads name's certificate from dir.
func ReadCertificate(dir, name string) (*x509.Certificate, error) {
	if err := CheckName(name); err != nil {
		return nil, err
	}
	return readCert(CertPath(dir, name))
}

func readCert(path string) (*x509.Certificate, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	block, _ := pem.Decode(b)
	if block == nil || block.Type != "CERTIFICATE" {
		return nil, fmt.Errorf("%s: no PEM CERTIFICATE block", path)
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return cert, nil
}

func parseECKey(b []byte) (*ecdsa.PrivateKey, error) {
	block, _ := pem.Decode(b)
	if block == nil {
		return nil, errors.New("no PEM block")
	}
	switch block.Type {
	case "PRIVATE KEY":
		k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
		if err != nil {
			return nil, err
		}
		ec, ok := k.(*ecdsa.PrivateKey)
		if !ok {
			return nil, fmt.Errorf("a %T key, want ECDSA", k)
		}
		return ec, nil
	case "EC PRIVATE KEY":
		return x509.ParseECPrivateKey(block.Bytes)
	default:
		return nil, fmt.Errorf("PEM block %q, want PRIVATE KEY", block.Type)
	}
}

type file struct {
	path string
	data []byte
	mode fs.FileMode
}

func paths(files []file) []string {
	var p []string
	for _, f := range files {
		p = append(p, f.path)
	}
	return p
}

// writeFiles writes every file or none. Without force it refuses when any
// exists (checked before the first write, and again by O_EXCL); with force
// each file is replaced atomically (temporary file, fsync, rename).
func writeFiles(dir string, files []file, force bool) error {
	if err := os.MkdirAll(dir, dirMode); err != nil {
		return fmt.Errorf("create directory: %w", err)
	}
	if !force {
		for _, f := range files {
			if _, err := os.Lstat(f.path); err == nil {
				return fmt.Errorf("%s: %w (pass --force to replace it)", f.path, ErrExist)
			} else if !errors.Is(err, fs.ErrNotExist) {
				return err
			}
		}
	}
	var written []string
	for _, f := range files {
		write := createExcl
		if force {
			write = replace
		}
		if err := write(f); err != nil {
			if !force {
				for _, p := range written {
					os.Remove(p)
				}
			}
			return err
		}
		written = append(written, f.path)
	}
	return nil
}

func createExcl(f file) error {
	fh, err := os.OpenFile(f.path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, f.mode)
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("%s: %w (pass --force to replace it)", f.path, ErrExist)
		}
		return err
	}
	err = writeSync(fh, f)
	if err != nil {
		os.Remove(f.path)
	}
	return err
}

func replace(f file) error {
	if err := safefile.WriteFile(f.path, f.data, f.mode); err != nil {
		return fmt.Errorf("replace %s: %w", f.path, err)
	}
	return nil
}

// writeSync sets the mode (exactly, whatever the umask), writes, syncs and
// closes.
func writeSync(fh *os.File, f file) error {
	err := fh.Chmod(f.mode)
	if err == nil {
		_, err = fh.Write(f.data)
	}
	if err == nil {
		err = fh.Sync()
	}
	if cerr := fh.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", f.path, err)
	}
	return nil
}
