package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// binaryPackage is the import path of the binary the harness builds.
const binaryPackage = "github.com/linerate/linerate/cmd/linerate"

// inMain says Main is running the tests, so the binary will be removed
// when they end.
var inMain atomic.Bool

// build is the one build of the binary in this process: its directory,
// its path and how it went.
var build struct {
	once sync.Once
	dir  string
	bin  string
	err  error
}

// Main runs the tests of a package that calls Binary and then removes the
// binary, whatever they did; the package's TestMain is
//
//	func TestMain(m *testing.M) { os.Exit(e2e.Main(m)) }
func Main(m *testing.M) int {
	inMain.Store(true)
	code := m.Run()
	if build.dir != "" {
		if err := os.RemoveAll(build.dir); err != nil {
			fmt.Fprintf(os.Stderr, "e2e: remove the linerate binary: %v\n", err)
			if code == 0 {
				code = 1
			}
		}
	}
	return code
}

// Binary returns the path of the linerate binary, built by the first test
// of the process that asks and shared by every later one (read only: they
// run it, copy it into a guest's initramfs, never change it). It is static
// (CGO_ENABLED=0, as make build makes it), because a VM host's initramfs
// holds this binary and no C library; GOFLAGS is cleared so that an outer
// -race, which needs cgo, does not reach it. A failed build fails every
// test that asks, with the one error. It skips under -short, and fails a
// test whose package runs without Main, which would leave the binary
// behind.
func Binary(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the linerate binary and runs it")
	}
	if !inMain.Load() {
		t.Fatal("e2e.Binary: the test package's TestMain must run its tests through e2e.Main, which removes the binary at the end")
	}
	build.once.Do(func() {
		start := time.Now()
		build.dir, build.bin, build.err = buildBinary()
		if build.err == nil {
			t.Logf("e2e: built %s in %s (shared by every test of this process)", binaryPackage, time.Since(start).Round(time.Millisecond))
		}
	})
	if build.err != nil {
		t.Fatal(build.err)
	}
	return build.bin
}

// buildBinary builds the binary into a new temporary directory and
// returns both.
func buildBinary() (dir, bin string, err error) {
	dir, err = os.MkdirTemp("", "linerate-e2e-")
	if err != nil {
		return "", "", fmt.Errorf("e2e: a directory for the linerate binary: %w", err)
	}
	bin = filepath.Join(dir, "linerate")
	cmd := exec.Command("go", "build", "-o", bin, binaryPackage)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=")
	if out, err := cmd.CombinedOutput(); err != nil {
		return dir, "", fmt.Errorf("e2e: go build %s: %w\n%s", binaryPackage, err, out)
	}
	return dir, bin, nil
}
