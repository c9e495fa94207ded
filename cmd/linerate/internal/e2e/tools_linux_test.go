//go:build linux && traffic

package e2e

import (
	"os"
	"os/exec"
	"testing"
)

// requireTool stops a test that needs the command name when it is not
// installed: a failure where CI is "true" (the CI machine installs it, so
// its absence is a broken setup, not a reason to pass unseen), a skip
// elsewhere. install says how to get it.
func requireTool(t testing.TB, name, install string) {
	t.Helper()
	if _, err := exec.LookPath(name); err == nil {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s not found (CI=true, where %s)", name, install)
		return
	}
	t.Skipf("%s is not installed (%s)", name, install)
}

// requireNft is requireTool for nft, which loads the lab's firewalls.
func requireNft(t testing.TB) {
	t.Helper()
	requireTool(t, "nft", "make deps installs Debian's nftables")
}

// stopTB records how requireTool stopped a test instead of stopping it.
type stopTB struct {
	testing.TB
	fatal, skip bool
}

func (s *stopTB) Helper()                           {}
func (s *stopTB) Fatalf(format string, args ...any) { s.fatal = true }
func (s *stopTB) Skipf(format string, args ...any)  { s.skip = true }

// A missing tool fails the test where CI is "true" and skips it
// elsewhere; a tool that is there does neither.
func TestRequireTool(t *testing.T) {
	for _, tc := range []struct {
		ci          string
		fatal, skip bool
	}{{"true", true, false}, {"", false, true}, {"false", false, true}} {
		t.Setenv("CI", tc.ci)
		s := &stopTB{TB: t}
		requireTool(s, "linerate-no-such-tool", "nowhere")
		if s.fatal != tc.fatal || s.skip != tc.skip {
			t.Errorf("CI=%q, tool missing: fatal %v skip %v, want %v %v", tc.ci, s.fatal, s.skip, tc.fatal, tc.skip)
		}
	}
	t.Setenv("CI", "true")
	s := &stopTB{TB: t}
	requireTool(s, "sh", "the base system")
	if s.fatal || s.skip {
		t.Errorf("a tool that is installed stopped the test: fatal %v skip %v", s.fatal, s.skip)
	}
}
