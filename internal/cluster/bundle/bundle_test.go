package bundle

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"io/fs"
	"math/big"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/linerate/linerate/internal/cluster/gossip"
	"github.com/linerate/linerate/internal/cluster/mtls"
)

// caDir is a certificate directory as `linerate certs init` and `certs
// issue` leave it: the CA with its key, the gossip key, h1's and the
// coordinator's pairs.
func caDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "ca")
	if _, _, err := mtls.Init(dir, mtls.CAOptions{CommonName: "test CA"}, false); err != nil {
		t.Fatal(err)
	}
	if _, err := gossip.InitKey(dir, false); err != nil {
		t.Fatal(err)
	}
	for _, lo := range []mtls.LeafOptions{{Name: "h1", Role: mtls.RoleAgent, Hosts: []string{"198.18.0.5"}}, {Name: "coord", Role: mtls.RoleCoordinator}} {
		if _, _, err := mtls.Issue(dir, lo, false); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// tree is every regular file of a bundle directory: path → mode and
// content.
type entry struct {
	mode fs.FileMode
	data string
}

func readTree(t *testing.T, dir string) map[string]entry {
	t.Helper()
	out := map[string]entry{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = entry{info.Mode().Perm(), string(b)}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func readArchive(t *testing.T, p string) (map[string]entry, []string) {
	t.Helper()
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	out := map[string]entry{}
	var dirs []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Uid != 0 || h.Gid != 0 {
			t.Errorf("%s: owner %d:%d, want root", h.Name, h.Uid, h.Gid)
		}
		if h.Typeflag == tar.TypeDir {
			dirs = append(dirs, h.Name+" "+h.FileInfo().Mode().String())
			continue
		}
		b, _ := io.ReadAll(tr)
		out[h.Name] = entry{fs.FileMode(h.Mode).Perm(), string(b)}
	}
	return out, dirs
}

// An agent's bundle holds its pair, ca.crt, the gossip key and
// agent.yaml, with the modes the agent's guard asks for, the same in
// the directory and the archive; never ca.key.
func TestWriteAgentBundle(t *testing.T) {
	ca := caDir(t)
	out := t.TempDir()
	b, err := Write(Options{CADir: ca, Name: "h1", Role: mtls.RoleAgent, Join: []string{"198.18.0.1:7946", "198.18.0.2:7946"}, Out: out})
	if err != nil {
		t.Fatal(err)
	}
	if b.Dir != filepath.Join(out, "h1") || b.Archive != filepath.Join(out, "h1.tar.gz") || b.Config != filepath.Join(out, "h1", "agent.yaml") {
		t.Errorf("bundle %+v", b)
	}
	tree := readTree(t, b.Dir)
	var names []string
	for n := range tree {
		names = append(names, n)
	}
	slices.Sort(names)
	if want := []string{"agent.yaml", "tls/ca.crt", "tls/gossip.key", "tls/h1.crt", "tls/h1.key"}; !slices.Equal(names, want) {
		t.Errorf("files %q, want %q", names, want)
	}
	for n, mode := range map[string]fs.FileMode{"agent.yaml": 0o644, "tls/ca.crt": 0o644, "tls/h1.crt": 0o644, "tls/h1.key": 0o600, "tls/gossip.key": 0o600} {
		if tree[n].mode != mode {
			t.Errorf("%s: mode %v, want %v", n, tree[n].mode, mode)
		}
	}
	for n, src := range map[string]string{"tls/ca.crt": "ca.crt", "tls/h1.key": "h1.key", "tls/gossip.key": "gossip.key"} {
		b, _ := os.ReadFile(filepath.Join(ca, src))
		if tree[n].data != string(b) {
			t.Errorf("%s differs from the CA directory's %s", n, src)
		}
	}
	if st, err := os.Stat(filepath.Join(b.Dir, "tls")); err != nil || st.Mode().Perm() != 0o700 {
		t.Errorf("tls/: %v %v, want mode 0700", st.Mode(), err)
	}
	noCAKey(t, ca, tree)
	// The agent's own guard accepts the unpacked directory.
	if err := mtls.CheckServingDir(filepath.Join(b.Dir, "tls"), "h1", false); err != nil {
		t.Errorf("the agent's guard refuses the bundle: %v", err)
	}
	cfg := tree["agent.yaml"].data
	for _, want := range []string{"\nname: h1\n", "\ntls-dir: /etc/linerate/tls\n", "\njoin: ['198.18.0.1:7946', '198.18.0.2:7946']\n", "# role: receiver   # sender, receiver or both\n", "# iface: ens1f0"} {
		if !strings.Contains(cfg, want) {
			t.Errorf("agent.yaml:\n%s\nwant %q", cfg, want)
		}
	}
	arch, dirs := readArchive(t, b.Archive)
	if len(arch) != len(tree) {
		t.Errorf("archive holds %d files, the directory %d", len(arch), len(tree))
	}
	for n, e := range tree {
		if arch[n] != e {
			t.Errorf("archive's %s (mode %v) differs from the directory's (mode %v)", n, arch[n].mode, e.mode)
		}
	}
	if !slices.Equal(dirs, []string{"tls/ drwx------"}) {
		t.Errorf("archive directories %q, want only tls/ 0700 (never one that would chmod /etc/linerate)", dirs)
	}
	noCAKey(t, ca, arch)
}

// noCAKey fails when any file of a bundle is named ca.key or holds the
// CA's key.
func noCAKey(t *testing.T, ca string, files map[string]entry) {
	t.Helper()
	key, err := os.ReadFile(filepath.Join(ca, mtls.CAKeyFile))
	if err != nil {
		t.Fatal(err)
	}
	for n, e := range files {
		if filepath.Base(n) == mtls.CAKeyFile || strings.Contains(e.data, string(bytes.TrimSpace(key))) {
			t.Errorf("%s: the CA's private key is in the bundle", n)
		}
	}
}

// A coordinator's bundle has coordinator.yaml naming its certificate;
// without seeds it says what to add; the CA's revocation list goes
// along when there is one.
func TestWriteCoordinatorBundle(t *testing.T) {
	ca := caDir(t)
	h1, err := mtls.ReadCertificate(ca, "h1")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := mtls.Revoke(ca, []*big.Int{h1.SerialNumber}, time.Now()); err != nil {
		t.Fatal(err)
	}
	b, err := Write(Options{CADir: ca, Name: "coord", Role: mtls.RoleCoordinator, Out: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	tree := readTree(t, b.Dir)
	cfg := tree["coordinator.yaml"].data
	for _, want := range []string{"\ntls-dir: /etc/linerate/tls\n", "\ncert-name: coord\n", "# join: [198.18.0.5:7946"} {
		if !strings.Contains(cfg, want) {
			t.Errorf("coordinator.yaml:\n%s\nwant %q", cfg, want)
		}
	}
	if _, ok := tree["tls/ca.crl"]; !ok {
		t.Error("no tls/ca.crl though the CA revoked a certificate")
	}
	if _, ok := tree["tls/coord.key"]; !ok {
		t.Error("no tls/coord.key")
	}
	noCAKey(t, ca, tree)
	if err := mtls.CheckServingDir(filepath.Join(b.Dir, "tls"), "coord", false); err != nil {
		t.Errorf("the coordinator's guard refuses the bundle: %v", err)
	}
}

func TestWriteRefuses(t *testing.T) {
	ca := caDir(t)
	out := t.TempDir()
	if _, err := Write(Options{CADir: ca, Name: "h1", Role: mtls.RoleAgent, Out: out}); err != nil {
		t.Fatal(err)
	}
	if _, err := Write(Options{CADir: ca, Name: "h1", Role: mtls.RoleAgent, Out: out}); !errors.Is(err, ErrExist) {
		t.Errorf("a second bundle for h1: %v, want ErrExist", err)
	}
	if _, err := Write(Options{CADir: ca, Name: "h1", Role: mtls.RoleAgent, Out: out, Force: true}); err != nil {
		t.Errorf("--force: %v", err)
	}
	if _, err := Write(Options{CADir: ca, Name: "h2", Role: mtls.RoleAgent, Out: out}); !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "h2.crt") {
		t.Errorf("no certificate for h2: %v", err)
	}
	if err := os.Remove(filepath.Join(ca, gossip.KeyFile)); err != nil {
		t.Fatal(err)
	}
	if _, err := Write(Options{CADir: ca, Name: "coord", Role: mtls.RoleCoordinator, Out: out}); err == nil || !strings.Contains(err.Error(), "linerate certs gossip-key --dir") {
		t.Errorf("no gossip key: %v", err)
	}
	if _, err := os.Stat(filepath.Join(out, "coord")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a refused bundle left %s: %v", filepath.Join(out, "coord"), err)
	}
}
