//go:build linux

package nstest

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// BuildLinerate builds the linerate binary into the test's temporary
// directory, for tests that run it (its agents, a lab) in namespaces; it
// skips under -short.
func BuildLinerate(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the linerate binary and runs it in namespaces")
	}
	bin := filepath.Join(t.TempDir(), "linerate")
	// Static (no cgo), as make build makes it: a VM host's initramfs
	// holds this binary and no C library.
	cmd := exec.Command("go", "build", "-o", bin, "github.com/linerate/linerate/cmd/linerate")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build linerate: %v\n%s", err, out)
	}
	return bin
}
