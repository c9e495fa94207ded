package safefile

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestWriteFileReplacesRegular(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "r.json")
	if err := WriteFile(p, []byte("one"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(p, []byte("two"), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	info, _ := os.Stat(p)
	if err != nil || string(b) != "two" || info.Mode().Perm() != 0o644 {
		t.Fatalf("%q %v %v", b, info.Mode(), err)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("temporary files left: %v", ents)
	}
}

func TestWriteFileThroughLink(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real.html")
	link := filepath.Join(dir, "link.html")
	os.WriteFile(real, []byte("old"), 0o644)
	os.Symlink(real, link)
	if err := WriteFile(link, []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(real); string(b) != "new" {
		t.Errorf("link's file holds %q", b)
	}
	if info, _ := os.Lstat(link); info.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v", info.Mode())
	}
}

// special makes targets that are not regular files: a directory, a
// fifo, a symbolic link to /dev/null, and (as root) a character device.
func special(t *testing.T) map[string]string {
	dir := t.TempDir()
	out := map[string]string{}
	out["directory"] = filepath.Join(dir, "d")
	if err := os.Mkdir(out["directory"], 0o755); err != nil {
		t.Fatal(err)
	}
	out["named pipe"] = filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(out["named pipe"], 0o644); err != nil {
		t.Fatal(err)
	}
	out["/dev/null"] = filepath.Join(dir, "null-link")
	if err := os.Symlink("/dev/null", out["/dev/null"]); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 {
		p := filepath.Join(dir, "null")
		// /dev/null's device number, 1:3.
		if err := syscall.Mknod(p, syscall.S_IFCHR|0o666, 1<<8|3); err == nil {
			out["character device"] = p
		}
	}
	return out
}

func TestWriteFileRefusesSpecial(t *testing.T) {
	for want, p := range special(t) {
		before, _ := os.Lstat(p)
		err := WriteFile(p, []byte("x"), 0o644)
		if !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), strings.TrimPrefix(want, "/dev/null")) {
			t.Errorf("%s: %v", want, err)
		}
		if cerr := Check(p); !errors.Is(cerr, ErrNotRegular) {
			t.Errorf("Check %s: %v", want, cerr)
		}
		after, _ := os.Lstat(p)
		if before.Mode() != after.Mode() || !os.SameFile(before, after) {
			t.Errorf("%s: changed from %v to %v", want, before.Mode(), after.Mode())
		}
		ents, _ := os.ReadDir(filepath.Dir(p))
		for _, e := range ents {
			if strings.Contains(e.Name(), ".tmp-") {
				t.Errorf("%s: temporary file %s left", want, e.Name())
			}
		}
	}
}

func TestOutputDashIsStdout(t *testing.T) {
	var buf bytes.Buffer
	if err := Output("-", &buf, []byte("report")); err != nil || buf.String() != "report" {
		t.Fatalf("%q %v", buf.String(), err)
	}
	if err := Check("-"); err != nil {
		t.Error(err)
	}
	if _, err := os.Stat("-"); err == nil {
		t.Error(`a file named "-" was made`)
	}
}

func TestCheckMissingDir(t *testing.T) {
	p := filepath.Join(t.TempDir(), "no", "r.html")
	if err := Check(p); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("%v", err)
	}
}
