package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// `linerate version` of a binary that `go build` made in a git checkout
// names the checkout's commit. The machine's GOFLAGS may carry
// -buildvcs=false, so the build asks for -buildvcs=auto (the Go default),
// as make build does. The Go toolchain stamps VCS information only from
// a .git directory, not a worktree's .git file: a worktree is cloned
// (objects shared) and built there.
func TestVersionFromBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary in a git checkout")
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed: no checkout to stamp a version from")
	}
	top, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Skipf("not in a git checkout: %v", err)
	}
	dir := strings.TrimSpace(string(top))
	if st, err := os.Stat(filepath.Join(dir, ".git")); err != nil || !st.IsDir() {
		clone := filepath.Join(t.TempDir(), "src")
		if out, err := exec.Command("git", "clone", "--quiet", "--shared", dir, clone).CombinedOutput(); err != nil {
			t.Fatalf("clone the worktree %s: %v\n%s", dir, err, out)
		}
		dir = clone
	}
	head, err := exec.Command("git", "-C", dir, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "linerate")
	build := exec.Command("go", "build", "-buildvcs=auto", "-o", bin, "./cmd/linerate")
	build.Dir = dir
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build in %s: %v\n%s", dir, err, out)
	}
	out, err := exec.Command(bin, "version").Output()
	if err != nil {
		t.Fatalf("linerate version: %v", err)
	}
	t.Logf("linerate version: %s", out)
	if rev := strings.TrimSpace(string(head))[:12]; !strings.HasPrefix(string(out), "linerate ") || !strings.Contains(string(out), rev) {
		t.Errorf("linerate version printed %q, want the commit %s", out, rev)
	}
}

// A binary without VCS information (this test binary's code, run in
// process) says dev and why.
func TestVersionCommand(t *testing.T) {
	code, out, _ := linerate(t, "version")
	if code != 0 || !strings.HasPrefix(out, "linerate "+version) {
		t.Errorf("exit %d, %q, want linerate %s", code, out, version)
	}
	if version == "dev" && !strings.Contains(out, "without VCS information") {
		t.Errorf("dev without its reason: %q", out)
	}
}
