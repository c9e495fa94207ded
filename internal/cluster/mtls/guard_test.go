package mtls

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckServingDir(t *testing.T) {
	dir := t.TempDir()
	if _, _, err := Init(dir, CAOptions{}, false); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Issue(dir, LeafOptions{Name: "agent1", Role: RoleAgent}, false); err != nil {
		t.Fatal(err)
	}
	caKey := filepath.Join(dir, CAKeyFile)
	err := CheckServingDir(dir, "agent1", false)
	if !errors.Is(err, ErrUnsafe) || !strings.Contains(err.Error(), caKey) || !strings.Contains(err.Error(), "move it off the host") {
		t.Errorf("ca.key present: %v, want ErrUnsafe naming %s and the fix", err, caKey)
	}
	if err := CheckServingDir(dir, "agent1", true); err != nil {
		t.Errorf("ca.key allowed: %v", err)
	}
	if err := os.Remove(caKey); err != nil {
		t.Fatal(err)
	}
	if err := CheckServingDir(dir, "agent1", false); err != nil {
		t.Errorf("safe directory refused: %v", err)
	}
	key := KeyPath(dir, "agent1")
	for _, m := range []os.FileMode{0o640, 0o604, 0o644} {
		if err := os.Chmod(key, m); err != nil {
			t.Fatal(err)
		}
		err := CheckServingDir(dir, "agent1", true)
		if !errors.Is(err, ErrUnsafe) || !strings.Contains(err.Error(), key) || !strings.Contains(err.Error(), "chmod 600 "+key) {
			t.Errorf("key mode %04o: %v, want ErrUnsafe naming the file and chmod 600", m, err)
		}
		if want := "mode " + octal(m); !strings.Contains(err.Error(), want) {
			t.Errorf("key mode %04o: %v does not say %q", m, err, want)
		}
	}
	if err := os.Chmod(key, 0o400); err != nil {
		t.Fatal(err)
	}
	if err := CheckServingDir(dir, "agent1", false); err != nil {
		t.Errorf("a 0400 key refused: %v", err)
	}
}

func octal(m os.FileMode) string {
	const digits = "01234567"
	p := uint32(m.Perm())
	return string([]byte{'0', digits[p>>6&7], digits[p>>3&7], digits[p&7]})
}

// A key another user owns could be replaced by them: refused (needs root
// to make such a file).
func TestCheckServingDirOwner(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to give a file to another user")
	}
	dir := t.TempDir()
	if _, _, err := Init(dir, CAOptions{}, false); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Issue(dir, LeafOptions{Name: "agent1", Role: RoleAgent}, false); err != nil {
		t.Fatal(err)
	}
	key := KeyPath(dir, "agent1")
	if err := os.Chown(key, 4242, 4242); err != nil {
		t.Fatal(err)
	}
	err := CheckServingDir(dir, "agent1", true)
	if !errors.Is(err, ErrUnsafe) || !strings.Contains(err.Error(), "owned by uid 4242") || !strings.Contains(err.Error(), "chown 0 "+key) {
		t.Errorf("key owned by uid 4242: %v, want ErrUnsafe naming the owner and chown", err)
	}
}
