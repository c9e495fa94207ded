// Package bundle writes a host's bootstrap bundle: what one agent or
// coordinator host needs in /etc/linerate, from the certificate
// directory where `linerate certs` issues.
//
// A bundle is a directory laid out as the host's /etc/linerate, and the
// same tree as a .tar.gz beside it (one file to copy; its entries carry
// their modes and root as owner):
//
//	agent.yaml or coordinator.yaml   the configuration file (keys: the command's flags)
//	tls/NAME.crt, tls/NAME.key       the host's certificate and key (0600)
//	tls/ca.crt                       the CA's certificate
//	tls/ca.crl                       the revocation list, when the CA has one
//	tls/gossip.key                   the cluster's gossip key (0600)
//
// tls/ is mode 0700. The CA's private key is never in a bundle: an agent
// refuses a directory that holds it.
package bundle

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/linerate/linerate/internal/cluster/gossip"
	"github.com/linerate/linerate/internal/cluster/mtls"
	"github.com/linerate/linerate/internal/config"
	"github.com/linerate/linerate/internal/enum"
)

// Host paths a bundle's configuration names: where it is unpacked.
const (
	ConfigDir = "/etc/linerate"
	TLSSubdir = "tls"
)

// Config files, by role.
const (
	AgentConfig       = "agent.yaml"
	CoordinatorConfig = "coordinator.yaml"
)

// ErrExist is the refusal to write over a bundle that is there.
var ErrExist = errors.New("bundle exists")

// Options say which host's bundle to write.
type Options struct {
	CADir string    // the certificate directory: ca.crt, gossip.key and the host's NAME.crt/NAME.key
	Name  string    // the host's certificate name (the agent's node name)
	Role  mtls.Role // agent or coordinator: which configuration file
	Join  []string  // gossip addresses (host:port) the configuration joins
	Out   string    // the bundle goes into Out/Name and Out/Name.tar.gz
	Force bool      // replace the files of an existing bundle
}

// Bundle is what Write wrote.
type Bundle struct {
	Dir     string // Out/Name
	Archive string // Out/Name.tar.gz
	Config  string // the configuration file in Dir
	Files   []string
}

// file is one file of a bundle: its path in the bundle, mode, content.
type file struct {
	rel  string
	mode fs.FileMode
	data []byte
}

// Write writes o.Name's bundle.
func Write(o Options) (*Bundle, error) {
	if err := mtls.CheckName(o.Name); err != nil {
		return nil, fmt.Errorf("bundle: %w", err)
	}
	files, err := collect(o)
	if err != nil {
		return nil, fmt.Errorf("bundle %s: %w", o.Name, err)
	}
	b := &Bundle{Dir: filepath.Join(o.Out, o.Name), Archive: filepath.Join(o.Out, o.Name+".tar.gz")}
	if !o.Force {
		for _, p := range []string{b.Dir, b.Archive} {
			if _, err := os.Lstat(p); err == nil {
				return nil, fmt.Errorf("bundle %s: %s: %w (pass --force to replace it)", o.Name, p, ErrExist)
			}
		}
	}
	if err := os.MkdirAll(filepath.Join(b.Dir, TLSSubdir), 0o700); err != nil {
		return nil, fmt.Errorf("bundle %s: %w", o.Name, err)
	}
	for _, d := range []string{b.Dir, filepath.Join(b.Dir, TLSSubdir)} {
		if err := os.Chmod(d, 0o700); err != nil {
			return nil, fmt.Errorf("bundle %s: %w", o.Name, err)
		}
	}
	for _, f := range files {
		p := filepath.Join(b.Dir, filepath.FromSlash(f.rel))
		if err := writeFile(p, f); err != nil {
			return nil, fmt.Errorf("bundle %s: %w", o.Name, err)
		}
		b.Files = append(b.Files, p)
		if !strings.Contains(f.rel, "/") {
			b.Config = p
		}
	}
	if err := writeArchive(b.Archive, files); err != nil {
		return nil, fmt.Errorf("bundle %s: %w", o.Name, err)
	}
	return b, nil
}

// collect reads the bundle's files from o.CADir and writes its
// configuration.
func collect(o Options) ([]file, error) {
	cfg, err := configFile(o)
	if err != nil {
		return nil, err
	}
	files := []file{cfg}
	for _, src := range []struct {
		name     string
		mode     fs.FileMode
		optional bool
	}{
		{o.Name + ".crt", 0o644, false},
		{o.Name + ".key", 0o600, false},
		{mtls.CACertFile, 0o644, false},
		{mtls.CRLFile, 0o644, true},
		{gossip.KeyFile, 0o600, false},
	} {
		data, err := os.ReadFile(filepath.Join(o.CADir, src.name))
		switch {
		case errors.Is(err, fs.ErrNotExist) && src.optional:
			continue
		case errors.Is(err, fs.ErrNotExist) && src.name == gossip.KeyFile:
			return nil, fmt.Errorf("%w (`linerate certs gossip-key --dir %s` writes one)", err, o.CADir)
		case err != nil:
			return nil, err
		}
		files = append(files, file{rel: path.Join(TLSSubdir, src.name), mode: src.mode, data: data})
	}
	return files, nil
}

// configFile is the host's configuration: its certificate directory
// where the bundle is unpacked, its name and the seeds to join.
func configFile(o Options) (file, error) {
	tlsDir := path.Join(ConfigDir, TLSSubdir)
	var name, head string
	var settings []config.Setting
	switch o.Role {
	case mtls.RoleAgent:
		name = AgentConfig
		head = fmt.Sprintf(`linerate agent %[1]s, from 'linerate certs issue --bundle'. Unpack into
%[2]s (tar -xzf %[1]s.tar.gz -C %[2]s): tls/ holds the host's
certificate, key, ca.crt and gossip.key. Keys are the flags of
'linerate agent'; a flag on the command line wins, and
'linerate agent --print-config' shows what the agent runs with.
Add what only this host knows (uncomment, fill in):
role: receiver   # %[3]s
iface: ens1f0    # the data interface the agent owns`, o.Name, ConfigDir, enum.Or(gossip.AgentRoles))
		settings = []config.Setting{config.Value("name", o.Name), config.Value("tls-dir", tlsDir)}
	case mtls.RoleCoordinator:
		name = CoordinatorConfig
		head = fmt.Sprintf(`linerate coordinator %[1]s, from 'linerate certs issue --bundle'. Unpack
into %[2]s (tar -xzf %[1]s.tar.gz -C %[2]s) on the host that runs
'linerate run', 'members' and 'campaign': keys are their cluster flags
(join, join-timeout, bind, advertise, gossip-key, insecure-gossip,
tls-dir, cert-name, insecure, allow-ca-key); a flag on the command line
wins.`, o.Name, ConfigDir)
		settings = []config.Setting{config.Value("tls-dir", tlsDir), config.Value("cert-name", o.Name)}
	default:
		return file{}, fmt.Errorf("role %q: %w", o.Role, mtls.ErrRole)
	}
	if len(o.Join) > 0 {
		settings = append(settings, config.List("join", o.Join...))
	} else {
		if o.Role == mtls.RoleCoordinator {
			head += "\nAdd the agents to join (uncomment, fill in):"
		}
		head += "\njoin: [198.18.0.5:7946, 198.18.0.6:7946]   # agents' gossip addresses (host:port)"
	}
	var buf bytes.Buffer
	if err := config.Encode(&buf, head, settings); err != nil {
		return file{}, err
	}
	return file{rel: name, mode: 0o644, data: buf.Bytes()}, nil
}

// writeFile writes f at p with f's mode whatever the umask or an
// earlier file's mode.
func writeFile(p string, f file) error {
	fh, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, f.mode)
	if err != nil {
		return err
	}
	if err := fh.Chmod(f.mode); err != nil {
		fh.Close()
		return err
	}
	if _, err := fh.Write(f.data); err != nil {
		fh.Close()
		return err
	}
	return fh.Close()
}

// writeArchive writes files as a .tar.gz unpacked into the host's
// configuration directory (tar -xzf NAME.tar.gz -C /etc/linerate),
// owned by root, with their modes.
func writeArchive(p string, files []file) error {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	now := time.Now().Truncate(time.Second)
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: TLSSubdir + "/", Mode: 0o700, ModTime: now}); err != nil {
		return err
	}
	for _, f := range files {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: f.rel, Mode: int64(f.mode), Size: int64(len(f.data)), ModTime: now}); err != nil {
			return err
		}
		if _, err := tw.Write(f.data); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	return writeFile(p, file{mode: 0o600, data: buf.Bytes()})
}
