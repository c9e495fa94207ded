package version

import (
	"regexp"
	"strings"
)

// debianUpstream is what Debian allows in a version without a revision
// (deb-version(7)): a digit first, then letters, digits and . + ~.
var debianUpstream = regexp.MustCompile(`^[0-9][A-Za-z0-9.+~]*$`)

// Debian is v, a version From gives, as a Debian package version that
// sorts as the Go versions do (deb-version(7)):
//   - a module version drops its "v" and its pre-release follows a "~"
//     (v1.2.3-rc.1 is 1.2.3~rc.1, before 1.2.3), the hyphens of a
//     pseudo-version's time and commit become dots
//     (v0.0.0-20261205091342-6b9bb8769786 is
//     0.0.0~20261205091342.6b9bb8769786), build metadata keeps its "+"
//     (+dirty);
//   - a bare VCS revision, which has no order, is 0~git.REV (its
//     "-dirty" a "+dirty");
//   - Dev, or anything else that does not map, is 0~dev.
func Debian(v string) string {
	if rest, ok := strings.CutPrefix(v, "v"); ok && rest != "" && rest[0] >= '0' && rest[0] <= '9' {
		core, meta, _ := strings.Cut(rest, "+")
		release, pre, hasPre := strings.Cut(core, "-")
		out := release
		if hasPre {
			out += "~" + strings.ReplaceAll(pre, "-", ".")
		}
		if meta != "" {
			out += "+" + meta
		}
		if debianUpstream.MatchString(out) {
			return out
		}
		return "0~dev"
	}
	if rev, dirty := strings.CutSuffix(v, "-dirty"); isHex(rev) {
		out := "0~git." + rev
		if dirty {
			out += "+dirty"
		}
		return out
	}
	return "0~dev"
}

func isHex(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}
