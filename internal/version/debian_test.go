package version

import (
	"os/exec"
	"testing"
)

func TestDebian(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"v1.2.3", "1.2.3"},
		{"v1.2.3-rc.1", "1.2.3~rc.1"},
		{"v0.0.0-20261205091342-6b9bb8769786", "0.0.0~20261205091342.6b9bb8769786"},
		{"v0.0.0-20261205091342-6b9bb8769786+dirty", "0.0.0~20261205091342.6b9bb8769786+dirty"},
		{"v1.2.4-0.20261205091342-6b9bb8769786", "1.2.4~0.20261205091342.6b9bb8769786"},
		{"6b9bb8769786", "0~git.6b9bb8769786"},
		{"6b9bb8769786-dirty", "0~git.6b9bb8769786+dirty"},
		{Dev, "0~dev"},
		{"", "0~dev"},
		{"v", "0~dev"},
		{"vx", "0~dev"},
		{"v1.2.3_x", "0~dev"},
	} {
		if got := Debian(c.in); got != c.want {
			t.Errorf("Debian(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestDebianOrder: dpkg itself agrees that every mapped version is valid
// and that the mapping keeps the Go order (a pre-release and a
// pseudo-version before their release, a later pseudo-version after an
// earlier one). Skipped only where dpkg is absent (not a Debian machine).
func TestDebianOrder(t *testing.T) {
	dpkg, err := exec.LookPath("dpkg")
	if err != nil {
		t.Skip("no dpkg on this machine: the Debian order is checked where it is")
	}
	ordered := []string{
		"6b9bb8769786",
		"v0.0.0-20261204000000-aaaaaaaaaaaa",
		"v0.0.0-20261205091342-6b9bb8769786",
		"v0.0.0-20261205091342-6b9bb8769786+dirty",
		"v1.2.3-rc.1",
		"v1.2.3",
		"v1.2.4-0.20261205091342-6b9bb8769786",
		"v1.2.4",
	}
	for i, v := range ordered {
		d := Debian(v)
		if out, err := exec.Command(dpkg, "--validate-version", d).CombinedOutput(); err != nil {
			t.Errorf("dpkg --validate-version %s (from %s): %v: %s", d, v, err, out)
		}
		if i == 0 {
			continue
		}
		prev := Debian(ordered[i-1])
		if err := exec.Command(dpkg, "--compare-versions", prev, "lt", d).Run(); err != nil {
			t.Errorf("dpkg: %s (from %s) is not before %s (from %s)", prev, ordered[i-1], d, v)
		}
	}
}
