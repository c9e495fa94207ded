package vm

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/linerate/linerate/internal/safefile"
)

// ErrPinNotOffered is returned when apt's archive does not offer a pinned
// package version (any more): the pin in PinsFile needs updating.
var ErrPinNotOffered = errors.New("pinned package version not offered by apt")

// runFunc runs a command in dir and returns its stdout; the error carries
// its stderr.
type runFunc func(ctx context.Context, dir, name string, args ...string) (string, error)

// fetcher downloads, verifies and unpacks the pinned packages into a
// cache; run runs apt-get, apt-cache and dpkg (a fake in tests).
type fetcher struct {
	cacheDir string
	pins     Pins
	run      runFunc
	log      hclog.Logger
}

// fetch returns the cached entry verified against f.pins, or fetches it.
func (f *fetcher) fetch(ctx context.Context) (*Kernel, error) {
	if err := os.MkdirAll(f.cacheDir, 0o755); err != nil {
		return nil, fmt.Errorf("fetch kernel: create cache dir: %w", err)
	}
	removeStaleFetches(f.cacheDir, f.log)
	pkg := f.pins.Kernel.Package
	dir := filepath.Join(f.cacheDir, pkg)
	k, err := loadCached(dir)
	if err == nil && k.VerifiedBy(f.pins) {
		f.log.Debug("kernel from cache", "package", pkg, "dir", dir)
		return k, nil
	}
	if err == nil {
		f.log.Info("cached kernel was not verified against the current pins: fetching again", "dir", dir, "verified", k.Verified)
	}
	start := time.Now()
	f.log.Info("fetching guest kernel", "kernel", f.pins.Kernel.String(), "busybox", f.pins.Busybox.String(), "cache", f.cacheDir)
	tmp, err := os.MkdirTemp(f.cacheDir, ".fetch-")
	if err != nil {
		return nil, fmt.Errorf("fetch kernel %s: %w", pkg, err)
	}
	defer os.RemoveAll(tmp)
	k, err = f.unpack(ctx, tmp)
	if err != nil {
		return nil, fmt.Errorf("fetch kernel %s into %s: %w: %w", pkg, f.cacheDir, ErrNoKernel, err)
	}
	if err := os.Chmod(tmp, 0o755); err != nil { // MkdirTemp made it 0700
		return nil, fmt.Errorf("fetch kernel %s: %w", pkg, err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		// Another process got there first: use what it left.
		k, lerr := loadCached(dir)
		if lerr == nil && k.VerifiedBy(f.pins) {
			return k, nil
		}
		if lerr == nil {
			lerr = fmt.Errorf("verified against %v, not the current pins", k.Verified)
		}
		// What is there is incomplete (an interrupted or damaged entry) or
		// of other pins: move it aside and put the fresh fetch in its place.
		f.log.Warn("replacing a cached kernel", "dir", dir, "problem", lerr)
		stale := fmt.Sprintf("%s.stale-%d", dir, time.Now().UnixNano())
		if rerr := os.Rename(dir, stale); rerr != nil {
			return nil, fmt.Errorf("fetch kernel %s: move into cache: %w (and the entry there is not usable: %v)", pkg, err, lerr)
		}
		_ = os.RemoveAll(stale)
		if err := os.Rename(tmp, dir); err != nil {
			return nil, fmt.Errorf("fetch kernel %s: move into cache: %w", pkg, err)
		}
	}
	f.log.Info("guest kernel ready", "package", pkg, "release", k.Release, "took", time.Since(start).Round(time.Millisecond))
	return loadCached(dir)
}

// download fetches pin's .deb into dir with apt-get download, checks its
// sha256 and returns its path. When apt cannot download it, the error
// says whether the archive still offers the pinned version.
func (f *fetcher) download(ctx context.Context, dir string, pin Pin) (string, error) {
	args := []string{"download"}
	if os.Geteuid() == 0 {
		// As root, apt drops to _apt, which cannot write a 0700 temp dir.
		args = append(args, "-o", "APT::Sandbox::User=root")
	}
	if _, err := f.run(ctx, dir, "apt-get", append(args, pin.String())...); err != nil {
		if oerr := f.offered(ctx, pin); oerr != nil {
			return "", fmt.Errorf("download %s: %w (%v)", pin, oerr, err)
		}
		return "", fmt.Errorf("download %s: %w", pin, err)
	}
	glob := pin.Package + "_*.deb"
	debs, _ := filepath.Glob(filepath.Join(dir, glob))
	if len(debs) != 1 {
		return "", fmt.Errorf("download %s: apt-get download left %d files matching %s in %s", pin, len(debs), glob, dir)
	}
	if err := verifySHA256(debs[0], pin.SHA256); err != nil {
		_ = os.Remove(debs[0])
		return "", fmt.Errorf("download %s: %w", pin, err)
	}
	return debs[0], nil
}

// verifySHA256 fails unless the file at p has the sha256 want (hex).
func verifySHA256(p, want string) error {
	file, err := os.Open(p)
	if err != nil {
		return fmt.Errorf("verify %s: %w", p, err)
	}
	defer file.Close()
	h := sha256.New()
	if _, err := io.Copy(h, file); err != nil {
		return fmt.Errorf("verify %s: %w", p, err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != want {
		return fmt.Errorf("verify %s: sha256 %s, want %s (the pin in %s); the file is removed", filepath.Base(p), got, want, PinsFile)
	}
	return nil
}

// offered returns an ErrPinNotOffered error naming what apt offers
// instead when its archive lacks pin's version, else nil.
func (f *fetcher) offered(ctx context.Context, pin Pin) error {
	out, err := f.run(ctx, "", "apt-cache", "madison", pin.Package)
	if err != nil {
		return nil // cannot tell; the download error says the rest
	}
	versions := madisonVersions(out)
	for _, v := range versions {
		if v == pin.Version {
			return nil
		}
	}
	offer := "no version of " + pin.Package
	if len(versions) > 0 {
		offer = pin.Package + " " + strings.Join(versions, ", ")
	}
	if pin == f.pins.Kernel {
		if cur, err := kernelPackage(ctx, f.run); err == nil && cur != pin.Package {
			offer += "; " + KernelMetapackage + " now depends on " + cur
			if out, err := f.run(ctx, "", "apt-cache", "madison", cur); err == nil {
				if vs := madisonVersions(out); len(vs) > 0 {
					offer += " " + strings.Join(vs, ", ")
				}
			}
		}
	}
	return fmt.Errorf("%w: apt offers %s, not the pinned %s: update the pin in %s (apt-cache show gives Version and SHA256; apt-get update first if the lists are old)",
		ErrPinNotOffered, offer, pin.Version, PinsFile)
}

// madisonVersions are the versions in `apt-cache madison` output
// ("pkg | version | source" lines), without repeats.
func madisonVersions(out string) []string {
	var vs []string
	seen := map[string]bool{}
	for _, l := range strings.Split(out, "\n") {
		f := strings.Split(l, "|")
		if len(f) < 3 {
			continue
		}
		v := strings.TrimSpace(f[1])
		if v != "" && !seen[v] {
			seen[v] = true
			vs = append(vs, v)
		}
	}
	return vs
}

var versionedImage = regexp.MustCompile(`^\s*Depends:\s*(linux-image-[0-9][^\s]*)\s*$`)

// kernelPackage asks apt which versioned package the metapackage pulls in.
func kernelPackage(ctx context.Context, run runFunc) (string, error) {
	out, err := run(ctx, "", "apt-cache", "depends", KernelMetapackage)
	if err != nil {
		return "", fmt.Errorf("resolve %s: %w", KernelMetapackage, err)
	}
	for _, l := range strings.Split(out, "\n") {
		if m := versionedImage.FindStringSubmatch(l); m != nil {
			return m[1], nil
		}
	}
	return "", fmt.Errorf("resolve %s: apt-cache depends names no linux-image-<version> package (apt-get update fetches the package lists)", KernelMetapackage)
}

// unpack downloads, verifies and unpacks the pinned kernel and
// busybox-static below dir, and returns the Kernel with paths relative
// to dir.
func (f *fetcher) unpack(ctx context.Context, dir string) (*Kernel, error) {
	pkg := f.pins.Kernel.Package
	for _, u := range []struct {
		pin  Pin
		into string
	}{
		{f.pins.Kernel, "root"},
		{f.pins.Busybox, "busybox"},
	} {
		deb, err := f.download(ctx, dir, u.pin)
		if err != nil {
			return nil, err
		}
		if _, err := f.run(ctx, "", "dpkg", "-x", deb, filepath.Join(dir, u.into)); err != nil {
			return nil, err
		}
		if err := os.Remove(deb); err != nil {
			return nil, err
		}
	}
	k := &Kernel{Package: pkg, Verified: f.pins.List()}
	vmlinuz, _ := filepath.Glob(filepath.Join(dir, "root", "boot", "vmlinuz-*"))
	if len(vmlinuz) != 1 {
		return nil, fmt.Errorf("%s has %d boot/vmlinuz-* files, want 1", pkg, len(vmlinuz))
	}
	k.Release = strings.TrimPrefix(filepath.Base(vmlinuz[0]), "vmlinuz-")
	k.Vmlinuz = rel(dir, vmlinuz[0])
	for _, m := range []string{"lib/modules", "usr/lib/modules"} { // usrmerged packages (trixie) use /usr/lib
		p := filepath.Join(dir, "root", m, k.Release)
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			k.ModulesDir = rel(dir, p)
			break
		}
	}
	if k.ModulesDir == "" {
		return nil, fmt.Errorf("%s has no lib/modules/%s", pkg, k.Release)
	}
	for _, b := range []string{"bin/busybox", "usr/bin/busybox"} {
		p := filepath.Join(dir, "busybox", b)
		if _, err := os.Stat(p); err == nil {
			k.Busybox = rel(dir, p)
			break
		}
	}
	if k.Busybox == "" {
		return nil, fmt.Errorf("%s has no bin/busybox", f.pins.Busybox.Package)
	}
	if err := CheckStatic(filepath.Join(dir, k.Busybox)); err != nil {
		return nil, err
	}
	modDir := filepath.Join(dir, k.ModulesDir)
	if _, err := os.Stat(filepath.Join(modDir, "modules.dep")); err != nil {
		f.log.Debug("package has no modules.dep: generating it from .modinfo", "dir", modDir)
		warns, err := GenerateModulesDep(modDir)
		if err != nil {
			return nil, err
		}
		for _, w := range warns {
			f.log.Warn("modules.dep", "warning", w)
		}
	}
	meta, err := json.MarshalIndent(k, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := safefile.WriteFile(filepath.Join(dir, kernelMeta), append(meta, '\n'), 0o644); err != nil {
		return nil, err
	}
	return k, nil
}
