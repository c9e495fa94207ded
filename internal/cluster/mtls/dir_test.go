package mtls

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func mode(t *testing.T, path string) fs.FileMode {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Mode().Perm()
}

func TestInitIssueLoad(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tls")
	_, files, err := Init(dir, CAOptions{}, false)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{filepath.Join(dir, "ca.crt"), filepath.Join(dir, "ca.key")}; strings.Join(files, " ") != strings.Join(want, " ") {
		t.Errorf("wrote %v, want %v", files, want)
	}
	if m := mode(t, dir); m != 0o700 {
		t.Errorf("dir mode %v, want 0700", m)
	}
	if m := mode(t, filepath.Join(dir, "ca.key")); m != 0o600 {
		t.Errorf("ca.key mode %v, want 0600", m)
	}
	if m := mode(t, filepath.Join(dir, "ca.crt")); m != 0o644 {
		t.Errorf("ca.crt mode %v, want 0644", m)
	}
	if _, _, err := Issue(dir, LeafOptions{Name: "agent1", Role: RoleAgent, Hosts: []string{"127.0.0.1"}}, false); err != nil {
		t.Fatal(err)
	}
	if m := mode(t, KeyPath(dir, "agent1")); m != 0o600 {
		t.Errorf("agent1.key mode %v, want 0600", m)
	}
	if m := mode(t, CertPath(dir, "agent1")); m != 0o644 {
		t.Errorf("agent1.crt mode %v, want 0644", m)
	}
	id, err := Load(dir, "agent1")
	if err != nil {
		t.Fatal(err)
	}
	if id.Name != "agent1" || id.Role != RoleAgent || id.Cert.Leaf == nil {
		t.Errorf("loaded %+v", id)
	}
}

func TestInitRefusesToOverwrite(t *testing.T) {
	dir := t.TempDir()
	if _, _, err := Init(dir, CAOptions{}, false); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(filepath.Join(dir, "ca.key"))
	_, _, err := Init(dir, CAOptions{}, false)
	if !errors.Is(err, ErrExist) || !strings.Contains(err.Error(), "ca.crt") || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("second init: %v, want ErrExist naming ca.crt and --force", err)
	}
	after, _ := os.ReadFile(filepath.Join(dir, "ca.key"))
	if !bytes.Equal(before, after) {
		t.Fatal("refused init changed ca.key")
	}
	// Only the key left: still refused, and the certificate is not written.
	os.Remove(filepath.Join(dir, "ca.crt"))
	if _, _, err := Init(dir, CAOptions{}, false); !errors.Is(err, ErrExist) || !strings.Contains(err.Error(), "ca.key") {
		t.Fatalf("init over ca.key: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "ca.crt")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("refused init wrote ca.crt: %v", err)
	}
	if _, _, err := Init(dir, CAOptions{}, true); err != nil {
		t.Fatalf("forced init: %v", err)
	}
	forced, _ := os.ReadFile(filepath.Join(dir, "ca.key"))
	if bytes.Equal(before, forced) {
		t.Error("forced init kept the old key")
	}
	if m := mode(t, filepath.Join(dir, "ca.key")); m != 0o600 {
		t.Errorf("replaced ca.key mode %v", m)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Errorf("directory holds %d entries after a forced init, want 2 (no temporary files)", len(entries))
	}
}

func TestIssueRefusesToOverwrite(t *testing.T) {
	dir := t.TempDir()
	if _, _, err := Init(dir, CAOptions{}, false); err != nil {
		t.Fatal(err)
	}
	o := LeafOptions{Name: "c1", Role: RoleCoordinator}
	if _, _, err := Issue(dir, o, false); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(CertPath(dir, "c1"))
	if _, _, err := Issue(dir, o, false); !errors.Is(err, ErrExist) {
		t.Fatalf("second issue: %v, want ErrExist", err)
	}
	after, _ := os.ReadFile(CertPath(dir, "c1"))
	if !bytes.Equal(before, after) {
		t.Fatal("refused issue changed c1.crt")
	}
	if _, _, err := Issue(dir, o, true); err != nil {
		t.Fatalf("forced issue: %v", err)
	}
}

func TestIssueWithoutCA(t *testing.T) {
	dir := t.TempDir()
	_, _, err := Issue(dir, LeafOptions{Name: "a", Role: RoleAgent}, false)
	if err == nil || !strings.Contains(err.Error(), "linerate certs init") {
		t.Fatalf("issue without a CA: %v, want a hint at certs init", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("failed issue left %d files", len(entries))
	}
}

func TestLoadRefusesForeignCertificate(t *testing.T) {
	dir, other := t.TempDir(), t.TempDir()
	for _, d := range []string{dir, other} {
		if _, _, err := Init(d, CAOptions{}, false); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := Issue(other, LeafOptions{Name: "a", Role: RoleAgent}, false); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"a.crt", "a.key"} {
		b, _ := os.ReadFile(filepath.Join(other, f))
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := Load(dir, "a"); err == nil || !strings.Contains(err.Error(), "does not verify") {
		t.Fatalf("load a certificate of another CA: %v", err)
	}
	if _, err := Load(dir, "missing"); err == nil || !strings.Contains(err.Error(), "linerate certs issue") {
		t.Fatalf("load a missing certificate: %v", err)
	}
	// A CA key that does not match the CA certificate.
	b, _ := os.ReadFile(filepath.Join(other, "ca.key"))
	if err := os.WriteFile(filepath.Join(dir, "ca.key"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadCA(dir); err == nil || !strings.Contains(err.Error(), "does not belong") {
		t.Fatalf("load mismatched CA key: %v", err)
	}
}
