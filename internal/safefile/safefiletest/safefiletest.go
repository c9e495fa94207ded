//go:build unix

// Package safefiletest makes, for tests, the output targets that
// safefile refuses to replace.
package safefiletest

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// Special makes targets that are not regular files in a temporary
// directory, by what safefile calls them: a directory, a named pipe, a
// symbolic link to /dev/null ("character device" through the link) and,
// as root, a character device with /dev/null's numbers (1:3).
func Special(t testing.TB) map[string]string {
	t.Helper()
	dir := t.TempDir()
	out := map[string]string{
		"directory":         filepath.Join(dir, "d"),
		"named pipe":        filepath.Join(dir, "fifo"),
		"link to /dev/null": filepath.Join(dir, "null-link"),
	}
	if err := os.Mkdir(out["directory"], 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(out["named pipe"], 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/null", out["link to /dev/null"]); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 {
		p := filepath.Join(dir, "null")
		if err := syscall.Mknod(p, syscall.S_IFCHR|0o666, 1<<8|3); err == nil {
			out["character device"] = p
		}
	}
	return out
}
