package topology

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// SaveTarGz writes a snapshot file that OpenHost opens by its name,
// unpacked into a directory that Close removes.
func TestSaveAndOpenSnapshot(t *testing.T) {
	r, _ := fixture(t, "apply-basic")
	rec := NewRecorder(r)
	if _, err := Inspect(rec, "eth0"); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "host.tar.gz")
	if err := rec.SaveTarGz(path); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path + ".tmp"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("temporary file left beside the snapshot: %v", err)
	}
	replay, err := OpenHost(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Inspect(replay, "eth0"); err != nil {
		t.Errorf("inspect the unpacked snapshot: %v", err)
	}
	unpacked := replay.Dir()
	if err := replay.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(unpacked); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("unpacked snapshot %s left after Close: %v", unpacked, err)
	}
}

// A path OpenHost cannot open as a host root matches its sentinel: a
// missing archive ErrNoSnapshot (with the open's own text), a file that
// is not one ErrNotDir.
func TestOpenHostRefuses(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "nope.tgz")
	_, err := OpenHost(missing)
	_, openErr := os.Open(missing)
	if !errors.Is(err, ErrNoSnapshot) || !errors.Is(err, fs.ErrNotExist) || err.Error() != openErr.Error() {
		t.Errorf("missing snapshot: %v, want ErrNoSnapshot reading %q", err, openErr)
	}
	file := filepath.Join(dir, "host.txt")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{file, filepath.Join(dir, "none")} {
		if _, err := OpenHost(p); !errors.Is(err, ErrNotDir) {
			t.Errorf("OpenHost(%s): %v, want ErrNotDir", p, err)
		}
	}
	bad := filepath.Join(dir, "bad.tar.gz")
	if err := os.WriteFile(bad, []byte("not gzip"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenHost(bad); err == nil || errors.Is(err, ErrNoSnapshot) || !strings.Contains(err.Error(), "read snapshot") {
		t.Errorf("corrupt snapshot: %v", err)
	}
}

// TestSaveTarGzRefusesSpecialFiles checks that a snapshot is written only
// over a regular file: a directory or a link to a device is refused and
// left as it was.
func TestSaveTarGzRefusesSpecialFiles(t *testing.T) {
	r, _ := fixture(t, "apply-basic")
	rec := NewRecorder(r)
	if _, err := Inspect(rec, "eth0"); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	link := filepath.Join(dir, "null")
	if err := os.Symlink(os.DevNull, link); err != nil {
		t.Fatal(err)
	}
	for _, target := range []string{dir, link} {
		if err := rec.SaveTarGz(target); err == nil || !strings.Contains(err.Error(), "write snapshot") {
			t.Errorf("SaveTarGz(%s): %v, want a refusal", target, err)
		}
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("the link to %s was replaced: %v", os.DevNull, err)
	}
	if fi, err := os.Stat(os.DevNull); err != nil || fi.Mode()&fs.ModeCharDevice == 0 {
		t.Errorf("%s is no longer a device: %v", os.DevNull, err)
	}
}
