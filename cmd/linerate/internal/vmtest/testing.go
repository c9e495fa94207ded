package vmtest

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/linerate/linerate/cmd/linerate/internal/vm"
)

// CacheEnv overrides the kernel cache of the tests.
const CacheEnv = "LINERATE_VMTEST_CACHE"

// CacheDir is where the tests keep the guest kernel: $LINERATE_VMTEST_CACHE,
// else .cache/vmtest at the root of the Go module containing the working
// directory (ignored by git), else linerate-vmtest in the user's cache
// directory.
func CacheDir() string {
	if d := os.Getenv(CacheEnv); d != "" {
		return d
	}
	if wd, err := os.Getwd(); err == nil {
		for d := wd; ; d = filepath.Dir(d) {
			if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
				return filepath.Join(d, ".cache", "vmtest")
			}
			if filepath.Dir(d) == d {
				break
			}
		}
	}
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "linerate-vmtest")
	}
	return filepath.Join(os.TempDir(), "linerate-vmtest")
}

// TestLogger is an hclog logger writing to the test's output (shown with
// -v or when the test fails).
func TestLogger(t testing.TB) hclog.Logger {
	return hclog.New(&hclog.LoggerOptions{Name: "vmtest", Output: t.Output(), Level: hclog.Debug})
}

// SkipUnlessAvailable returns the guest kernel (fetched into CacheDir),
// or skips the test with the reason when guests cannot run here: -short,
// a host other than linux/amd64, qemu-system-x86_64 missing
// (vm.Available), or no kernel to be had. In CI
// (CI=true) a missing qemu or kernel fails the test instead, because
// `make vmtest-deps` installs what guests need.
func SkipUnlessAvailable(t testing.TB) *vm.Kernel {
	t.Helper()
	if testing.Short() {
		t.Skip("vmtest: guest boots are skipped in -short mode")
	}
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skipf("vmtest: guests run on linux/amd64 hosts only, this is %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	missing := func(format string, args ...any) {
		t.Helper()
		if os.Getenv("CI") == "true" {
			t.Fatalf("vmtest: "+format+" (CI=true, where `make vmtest-deps` should have provided it)", args...)
		}
		t.Skipf("vmtest: "+format+"; skipping the guest test (`make vmtest-deps` as root installs what is missing)", args...)
	}
	if err := vm.Available(); err != nil {
		missing("%v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	k, err := vm.FetchKernel(ctx, CacheDir(), TestLogger(t))
	if err != nil {
		missing("cannot get a guest kernel: %v", err)
	}
	return k
}

// BuildTestBinary compiles the tests of package pkg (an import path or a
// ./relative directory) into a statically linked linux/amd64 binary with
// `CGO_ENABLED=0 go test -c -tags traffic`, in a directory removed after
// the test.
func BuildTestBinary(t testing.TB, pkg string) string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("vmtest: build test binary of %s: the go tool is not in PATH: %v", pkg, err)
	}
	out := filepath.Join(t.TempDir(), path.Base(pkg)+".test")
	var output bytes.Buffer
	// -tags traffic: the package's traffic-tagged tests (the ones that
	// need real traffic or a real kernel) are what guests run.
	cmd := exec.Command(goTool, "test", "-c", "-tags", "traffic", "-o", out, pkg)
	// GOFLAGS is cleared so that an outer -race (which needs cgo) does not leak in.
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=amd64", "GOFLAGS=")
	cmd.Stdout, cmd.Stderr = &output, &output
	start := time.Now()
	if err := cmd.Run(); err != nil {
		t.Fatalf("vmtest: build test binary of %s: go test -c: %v\n%s", pkg, err, strings.TrimSpace(output.String()))
	}
	if err := vm.CheckStatic(out); err != nil {
		t.Fatalf("vmtest: build test binary of %s: %v", pkg, err)
	}
	t.Logf("vmtest: built %s test binary in %s", pkg, time.Since(start).Round(time.Millisecond))
	return out
}

// GuestTests is a script that runs the TestGuest* tests of each test
// binary in the guest, all of them, and exits non-zero when any failed.
func GuestTests(binaries ...string) string {
	var b strings.Builder
	b.WriteString("rc=0\n")
	for _, bin := range binaries {
		b.WriteString(bin + " -test.v -test.count=1 -test.run '^TestGuest' || rc=1\n")
	}
	b.WriteString("exit $rc\n")
	return b.String()
}

// RunTests boots g and fails t unless its script exited 0 and every
// named test passed in the guest (skipped or missing fails too); what
// names the tests in the failure.
func (g *Guest) RunTests(t testing.TB, what string, names ...string) *Result {
	t.Helper()
	res, err := g.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("guest ran %s, exit %d; its output:\n%s", res.Duration.Round(time.Millisecond), res.ExitCode, res.Output)
	if res.ExitCode != 0 {
		t.Fatalf("%s guest tests failed (exit %d); console:\n%s", what, res.ExitCode, res.Console)
	}
	for _, name := range names {
		if !strings.Contains(res.Output, "--- PASS: "+name) {
			t.Errorf("%s did not pass in the guest (skipped or missing)", name)
		}
	}
	return res
}
