package safefile_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/linerate/linerate/internal/safefile"
	"github.com/linerate/linerate/internal/safefile/safefiletest"
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

func TestWriteFileRefusesSpecial(t *testing.T) {
	for want, p := range safefiletest.Special(t) {
		before, _ := os.Lstat(p)
		err := WriteFile(p, []byte("x"), 0o644)
		if !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), strings.TrimPrefix(want, "link to /dev/null")) {
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
