package version

import (
	"runtime/debug"
	"strings"
	"testing"
)

func TestFrom(t *testing.T) {
	vcs := func(rev, modified string) []debug.BuildSetting {
		return []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: modified}}
	}
	const rev = "42a7db9c0ffee0123456789abcdef0123456789a"
	for _, tt := range []struct {
		name string
		bi   *debug.BuildInfo
		ok   bool
		want string
	}{
		{"module version", &debug.BuildInfo{Main: debug.Module{Version: "v1.2.0"}}, true, "v1.2.0"},
		{"pseudo-version from the checkout", &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20260301120000-42a7db9c0ffe+dirty"}, Settings: vcs(rev, "true")}, true,
			"v0.0.0-20260301120000-42a7db9c0ffe+dirty"},
		{"revision", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs(rev, "false")}, true, "42a7db9c0ffe"},
		{"revision, modified", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs(rev, "true")}, true, "42a7db9c0ffe-dirty"},
		{"go test", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, true, Dev},
		{"no build information", nil, false, Dev},
	} {
		got := From(tt.bi, tt.ok)
		if got.Version != tt.want || (got.Version == Dev) != (got.Reason != "") {
			t.Errorf("%s: %+v, want version %q (and a reason only for %s)", tt.name, got, tt.want, Dev)
		}
	}
	if r := From(&debug.BuildInfo{}, true).Reason; !strings.Contains(r, "without VCS information") {
		t.Errorf("reason %q", r)
	}
}

// Get reads this binary's own build information, once; String is its
// version.
func TestGet(t *testing.T) {
	bi, ok := debug.ReadBuildInfo()
	if g := Get(); g != From(bi, ok) || String() != g.Version || g.Version == "" {
		t.Errorf("Get %+v, String %q, want From(ReadBuildInfo()) %+v", g, String(), From(bi, ok))
	}
}
