// Package version is linerate's version, read from what the Go toolchain
// stamped into the binary: the one place `linerate version`, the agents'
// Describe and gossip tags, and every stored result take it from.
package version

import (
	"runtime/debug"
	"sync"
)

// Dev is the version of a binary whose build says nothing of its source.
const Dev = "dev"

// Info is a binary's version and, for Dev, why the build could not say.
type Info struct {
	Version string
	Reason  string // why the version is Dev; empty otherwise
}

// Get is this binary's version (see From), read once.
func Get() Info { return get() }

// String is Get().Version.
func String() string { return get().Version }

var get = sync.OnceValue(func() Info { return From(debug.ReadBuildInfo()) })

// From is the version a build's information gives (ok: there was some):
//   - the main module's version, when built as a module at one (`go
//     install …@v1.2.0`) or, since Go 1.24, in a git checkout: a tag or
//     a pseudo-version carrying the commit, "+dirty" when modified;
//   - else the VCS revision `go build` stamps in a git checkout
//     (vcs.revision, its first 12 hex digits), "-dirty" when vcs.modified;
//   - else Dev, with the reason (`go test` binaries, -buildvcs=false, a
//     build outside a checkout).
func From(bi *debug.BuildInfo, ok bool) Info {
	if !ok || bi == nil {
		return Info{Version: Dev, Reason: "no build information in the binary"}
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return Info{Version: v}
	}
	var rev string
	var modified bool
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if rev == "" {
		return Info{Version: Dev, Reason: "built without VCS information (go test, -buildvcs=false, or outside a git checkout) and not at a module version"}
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if modified {
		rev += "-dirty"
	}
	return Info{Version: rev}
}
