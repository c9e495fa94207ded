//go:build linux && traffic

package e2e

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// The Debian chroot the package tests install into: Debian's minimal base
// (debootstrap --variant=minbase) of one pinned suite with bash-completion
// (to complete with the package's script as a person's shell does) and
// systemd, systemd-sysv and dbus (TestUnitUnderSystemd boots it with
// systemd-nspawn, systemd as its PID 1), made on first use from the mirror
// apt uses here and cached outside git, beside the VM lab's guest images;
// each test works on a copy. One cache for both: on a fresh machine each
// debootstrap takes minutes.
const (
	chrootSuite   = "bookworm"
	chrootInclude = "bash-completion,systemd,systemd-sysv,dbus"
	chrootCache   = "/var/cache/linerate/debian"
	repoRoot      = "../../../.."
)

// aptMirror is the first Debian mirror apt's sources name (deb822 URIs:
// or a one-line deb entry), else Debian's own.
func aptMirror() string {
	files, _ := filepath.Glob("/etc/apt/sources.list.d/*")
	for _, f := range append([]string{"/etc/apt/sources.list"}, files...) {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			fields := strings.Fields(line)
			switch {
			case len(fields) >= 2 && fields[0] == "URIs:" && strings.HasSuffix(fields[1], "/debian"):
				return fields[1]
			case len(fields) >= 3 && fields[0] == "deb" && strings.HasSuffix(fields[1], "/debian"):
				return fields[1]
			}
		}
	}
	return "http://deb.debian.org/debian"
}

// debianChroot is a fresh copy of the cached minbase chroot, making the
// cache first when it is missing (a directory renamed into place whole, so
// an interrupted debootstrap leaves no half cache).
func debianChroot(t *testing.T) string {
	t.Helper()
	cache := filepath.Join(chrootCache, chrootSuite+"-minbase+"+chrootInclude)
	if _, err := os.Stat(cache); err != nil {
		requireTool(t, "debootstrap", "make package-deps installs Debian's debootstrap")
		if err := os.MkdirAll(chrootCache, 0o755); err != nil {
			t.Fatal(err)
		}
		tmp, err := os.MkdirTemp(chrootCache, "debootstrap-")
		if err != nil {
			t.Fatal(err)
		}
		defer func() {
			// debootstrap mounts /proc and /sys in its target and unmounts
			// them at its end; one that failed may not have: never remove
			// files through a mount.
			unmountUnder(t, tmp)
			_ = os.RemoveAll(tmp)
		}()
		start := time.Now()
		mirror := aptMirror()
		if out, err := exec.Command("nice", "-n", "19", "debootstrap", "--variant=minbase", "--include="+chrootInclude, chrootSuite, tmp, mirror).CombinedOutput(); err != nil {
			t.Fatalf("debootstrap --variant=minbase %s from %s: %v\n%s", chrootSuite, mirror, err, lastLines(out, 20))
		}
		if err := os.Rename(tmp, cache); err != nil {
			t.Fatal(err)
		}
		t.Logf("debootstrap --variant=minbase %s from %s into %s: %s (first use; cached)", chrootSuite, mirror, cache, time.Since(start).Round(time.Second))
	}
	dir := filepath.Join(t.TempDir(), "root")
	start := time.Now()
	if out, err := exec.Command("cp", "-a", cache, dir).CombinedOutput(); err != nil {
		t.Fatalf("copy the chroot %s: %v: %s", cache, err, out)
	}
	// A system's root directory is 0755; os.MkdirTemp made the cache's
	// 0700, and the booted container's daemons that are not root (dbus)
	// could reach nothing in it.
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Logf("chroot copied from %s in %s", cache, time.Since(start).Round(time.Millisecond))
	return dir
}

// unmountUnder lazily unmounts every mount at or below dir, deepest first.
func unmountUnder(t *testing.T, dir string) {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	var mounts []string
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) > 4 && (f[4] == dir || strings.HasPrefix(f[4], dir+"/")) {
			mounts = append(mounts, f[4])
		}
	}
	slices.SortFunc(mounts, func(a, b string) int { return len(b) - len(a) })
	for _, m := range mounts {
		if out, err := exec.Command("umount", "-l", m).CombinedOutput(); err != nil {
			t.Fatalf("umount %s: %v: %s", m, err, out)
		}
	}
}

func lastLines(b []byte, n int) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// treeList is every path under root with its type, mode and size (a
// symlink its target), except dpkg's own records and logs, which
// installing and purging a package rightly change.
func treeList(t *testing.T, root string) map[string]string {
	t.Helper()
	skip := []string{"var/lib/dpkg", "var/log", "var/cache/debconf", "tmp", "proc", "dev", "sys"}
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if slices.Contains(skip, rel) {
			return filepath.SkipDir
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		desc := info.Mode().String()
		switch {
		case info.Mode()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			desc += " -> " + target
		case info.Mode().IsRegular():
			desc += fmt.Sprintf(" %d", info.Size())
		}
		out[rel] = desc
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// inChroot runs a command in the chroot, failing the test on an error.
func inChroot(t *testing.T, root string, args ...string) string {
	t.Helper()
	cmd := exec.Command("chroot", append([]string{root}, args...)...)
	cmd.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "DEBIAN_FRONTEND=noninteractive", "LANG=C"}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("chroot %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// diffTrees says what differs between two treeLists.
func diffTrees(before, after map[string]string) []string {
	var d []string
	for p, a := range after {
		if b, ok := before[p]; !ok {
			d = append(d, "left behind: "+p+" "+a)
		} else if a != b {
			d = append(d, "changed: "+p+" "+b+" -> "+a)
		}
	}
	for p := range before {
		if _, ok := after[p]; !ok {
			d = append(d, "removed: "+p)
		}
	}
	slices.Sort(d)
	return d
}

// makePackage runs `make package` and returns the .deb it wrote.
func makePackage(t *testing.T) string {
	t.Helper()
	out := t.TempDir()
	start := time.Now()
	mk := exec.Command("make", "-C", repoRoot, "--no-print-directory", "package", "PACKAGE_DIR="+out)
	if b, err := mk.CombinedOutput(); err != nil {
		t.Fatalf("make package: %v\n%s", err, lastLines(b, 30))
	}
	debs, _ := filepath.Glob(filepath.Join(out, "linerate_*.deb"))
	if len(debs) != 1 {
		t.Fatalf("make package wrote %v into %s, want one linerate_*.deb", debs, out)
	}
	t.Logf("make package: %s in %s", filepath.Base(debs[0]), time.Since(start).Round(time.Second))
	return debs[0]
}

// installPackage installs the .deb in the chroot with dpkg -i.
func installPackage(t *testing.T, root, deb string) {
	t.Helper()
	if b, err := os.ReadFile(deb); err != nil {
		t.Fatal(err)
	} else if err := os.WriteFile(filepath.Join(root, "tmp/linerate.deb"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	inChroot(t, root, "dpkg", "-i", "/tmp/linerate.deb")
	if err := os.Remove(filepath.Join(root, "tmp/linerate.deb")); err != nil {
		t.Fatal(err)
	}
}

// `make package` builds the .deb; in a Debian chroot it installs (the
// binary runs and says the package's version, the unit, the conffile, a
// man page per command and the completions are where Debian looks for
// them), removes leaving only its conffile, and purges leaving the chroot
// as it was, file for file.
func TestPackageInstallRemove(t *testing.T) {
	if os.Geteuid() != 0 {
		if os.Getenv("CI") == "true" {
			t.Fatal("needs root (chroot, dpkg in it), and CI runs as root")
		}
		t.Skip("needs root: installs the package in a Debian chroot")
	}
	requireTool(t, "make", "Debian's make")
	root := debianChroot(t)
	before := treeList(t, root)

	deb := makePackage(t)
	bin := filepath.Join(repoRoot, "bin/linerate")
	v, err := exec.Command(bin, "version").Output()
	if err != nil {
		t.Fatal(err)
	}
	debVersion, err := exec.Command(bin, "gen", "debian-version").Output()
	if err != nil {
		t.Fatal(err)
	}
	wantVersion := strings.TrimSpace(string(debVersion))
	t.Logf("binary: %s", strings.TrimSpace(string(v)))

	start := time.Now()
	installPackage(t, root, deb)
	if got := inChroot(t, root, "dpkg-query", "-W", "-f", "${Version} ${Status}", "linerate"); got != wantVersion+" install ok installed" {
		t.Errorf("installed: %q, want version %s installed", got, wantVersion)
	}
	if got := inChroot(t, root, "linerate", "version"); got != string(v) {
		t.Errorf("the installed linerate says %q, the built one %q", got, v)
	}
	files := strings.Split(strings.TrimSpace(inChroot(t, root, "dpkg", "-L", "linerate")), "\n")
	for _, f := range []string{"/usr/bin/linerate", "/lib/systemd/system/linerate-agent.service", "/etc/linerate/agent.yaml",
		"/usr/share/man/man1/linerate.1.gz", "/usr/share/man/man1/linerate-agent.1.gz",
		"/usr/share/bash-completion/completions/linerate", "/usr/share/zsh/vendor-completions/_linerate", "/usr/share/fish/vendor_completions.d/linerate.fish"} {
		if !slices.Contains(files, f) {
			t.Errorf("the package does not install %s", f)
		}
	}
	var pages int
	for _, f := range files {
		if strings.HasPrefix(f, "/usr/share/man/man1/linerate") && strings.HasSuffix(f, ".1.gz") {
			pages++
		}
	}
	manDir := t.TempDir()
	if b, err := exec.Command(bin, "gen", "man", "--dir", manDir).CombinedOutput(); err != nil {
		t.Fatalf("gen man: %v: %s", err, b)
	}
	if gen, _ := filepath.Glob(filepath.Join(manDir, "*.1")); pages != len(gen) || pages < 40 {
		t.Errorf("the package holds %d man pages, the binary's commands make %d", pages, len(gen))
	}
	if got := inChroot(t, root, "dpkg-query", "-W", "-f", "${Conffiles}", "linerate"); !regexp.MustCompile(`^\s*/etc/linerate/agent.yaml [0-9a-f]{32}\s*$`).MatchString(got) {
		t.Errorf("conffiles %q, want /etc/linerate/agent.yaml alone", got)
	}
	inChroot(t, root, "bash", "-n", "/usr/share/bash-completion/completions/linerate")
	// bash-completion loads the script from where the package put it on
	// the first <TAB> after "linerate", which then completes a
	// subcommand and a flag of one. The script reads the binary's
	// answers through a process substitution (/dev/fd: the chroot needs
	// its /proc), and its compopt says on stderr that no <TAB> called it.
	proc := filepath.Join(root, "proc")
	if out, err := exec.Command("mount", "-t", "proc", "proc", proc).CombinedOutput(); err != nil {
		t.Fatalf("mount /proc in the chroot: %v: %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", "-l", proc).Run() }) // if a check below stops the test
	complete := `. /usr/share/bash-completion/bash_completion
_completion_loader linerate
for line in "linerate ag" "linerate agent --tls"; do
	COMP_LINE=$line; COMP_POINT=${#COMP_LINE}; read -ra COMP_WORDS <<<"$line"; COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
	__start_linerate linerate "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}" 2>/dev/null
	echo "$line: ${COMPREPLY[*]}"
done`
	got := inChroot(t, root, "bash", "-c", complete)
	if out, err := exec.Command("umount", proc).CombinedOutput(); err != nil {
		t.Fatalf("umount the chroot's /proc: %v: %s", err, out)
	}
	if want := "linerate ag: agent\nlinerate agent --tls: --tls-dir\n"; got != want {
		t.Errorf("bash completion in the chroot:\n%s\nwant:\n%s", got, want)
	}
	conf := inChroot(t, root, "cat", "/etc/linerate/agent.yaml")
	if gen, err := exec.Command(bin, "gen", "agent-config").Output(); err != nil || string(gen) != conf {
		t.Errorf("the installed /etc/linerate/agent.yaml is not what the binary generates (%v)", err)
	}
	installed := treeList(t, root)
	t.Logf("installed %d files and directories in %s", len(diffTrees(before, installed)), time.Since(start).Round(time.Millisecond))

	// The operator edits the configuration: it stays through remove,
	// not through purge.
	if err := os.WriteFile(filepath.Join(root, "etc/linerate/agent.yaml"), []byte(conf+"role: sender\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	inChroot(t, root, "dpkg", "-r", "linerate")
	if got := inChroot(t, root, "dpkg-query", "-W", "-f", "${Status}", "linerate"); got != "deinstall ok config-files" {
		t.Errorf("removed: status %q, want deinstall ok config-files", got)
	}
	removed := treeList(t, root)
	left := diffTrees(before, removed)
	if want := []string{"left behind: etc/linerate " + installed["etc/linerate"], "left behind: etc/linerate/agent.yaml " + fmt.Sprintf("-rw-r--r-- %d", len(conf)+len("role: sender\n"))}; !slices.Equal(left, want) {
		t.Errorf("after dpkg -r, against the chroot before:\n%s\nwant only the conffile:\n%s", strings.Join(left, "\n"), strings.Join(want, "\n"))
	}
	inChroot(t, root, "dpkg", "-P", "linerate")
	if d := diffTrees(before, treeList(t, root)); len(d) != 0 {
		t.Errorf("after dpkg -P, against the chroot before:\n%s", strings.Join(d, "\n"))
	}
	if b, err := exec.Command("chroot", root, "dpkg-query", "-W", "linerate").CombinedOutput(); err == nil {
		t.Errorf("purged, dpkg still knows linerate: %s", b)
	}
}
