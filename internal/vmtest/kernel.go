package vmtest

import (
	"bytes"
	"context"
	"debug/elf"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"
)

// Debian packages the harness fetches with apt-get download.
const (
	// KernelMetapackage depends on the versioned kernel image package
	// (linux-image-6.1.0-NN-cloud-amd64 on bookworm).
	KernelMetapackage = "linux-image-cloud-amd64"
	// BusyboxPackage carries the statically linked busybox of the initramfs.
	BusyboxPackage = "busybox-static"
	// CacheEnv overrides the cache directory.
	CacheEnv = "LINERATE_VMTEST_CACHE"
)

// ErrNoKernel: no kernel could be fetched or found in the cache.
var ErrNoKernel = errors.New("no guest kernel")

// Kernel is an unpacked Debian kernel image package and the static
// busybox that goes with it into every initramfs.
type Kernel struct {
	Package    string `json:"package"` // "linux-image-6.1.0-57-cloud-amd64"
	Release    string `json:"release"` // the guest's uname -r: "6.1.0-57-cloud-amd64"
	Vmlinuz    string `json:"vmlinuz"` // bzImage for qemu -kernel
	ModulesDir string `json:"modules"` // lib/modules/<release>, with a modules.dep
	Busybox    string `json:"busybox"` // statically linked busybox from busybox-static
}

// Modules returns the kernel's module dependency table.
func (k *Kernel) Modules() (*ModuleDB, error) { return LoadModuleDB(k.ModulesDir) }

// DefaultCacheDir is $LINERATE_VMTEST_CACHE, else .cache/vmtest at the
// root of the Go module containing the working directory, else
// linerate-vmtest in the user's cache directory.
func DefaultCacheDir() string {
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

const kernelMeta = "kernel.json"

// FetchKernel returns the kernel of KernelMetapackage's current version,
// unpacked in cacheDir (DefaultCacheDir when empty). The first call per
// kernel version downloads the package and busybox-static with
// `apt-get download` (needs apt's package lists: `apt-get update`, no
// root), unpacks them with `dpkg -x` and writes modules.dep; later calls
// only read the cache. When apt cannot name the package, the newest cached
// kernel is used. Concurrent fetches into one cache are safe.
func FetchKernel(ctx context.Context, cacheDir string, log hclog.Logger) (*Kernel, error) {
	if log == nil {
		log = hclog.NewNullLogger()
	}
	if cacheDir == "" {
		cacheDir = DefaultCacheDir()
	}
	if err := os.MkdirAll(cacheDir, 0o755); err != nil {
		return nil, fmt.Errorf("fetch kernel: create cache dir: %w", err)
	}
	removeStaleFetches(cacheDir, log)
	pkg, err := kernelPackage(ctx)
	if err != nil {
		k, cerr := newestCached(cacheDir)
		if cerr != nil {
			return nil, fmt.Errorf("fetch kernel: %w: %w; and the cache %s has none: %v", ErrNoKernel, err, cacheDir, cerr)
		}
		log.Warn("cannot resolve the kernel package; using the newest cached kernel", "error", err, "package", k.Package)
		return k, nil
	}
	dir := filepath.Join(cacheDir, pkg)
	if k, err := loadCached(dir); err == nil {
		log.Debug("kernel from cache", "package", pkg, "dir", dir)
		return k, nil
	}
	start := time.Now()
	log.Info("fetching guest kernel", "package", pkg, "cache", cacheDir)
	tmp, err := os.MkdirTemp(cacheDir, ".fetch-")
	if err != nil {
		return nil, fmt.Errorf("fetch kernel %s: %w", pkg, err)
	}
	defer os.RemoveAll(tmp)
	k, err := unpackKernel(ctx, tmp, pkg, log)
	if err != nil {
		return nil, fmt.Errorf("fetch kernel %s into %s: %w", pkg, cacheDir, err)
	}
	if err := os.Chmod(tmp, 0o755); err != nil { // MkdirTemp made it 0700
		return nil, fmt.Errorf("fetch kernel %s: %w", pkg, err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		// Another process got there first: use what it left.
		k, lerr := loadCached(dir)
		if lerr == nil {
			return k, nil
		}
		// What is there is incomplete (an interrupted or damaged entry):
		// move it aside and put the fresh fetch in its place.
		log.Warn("replacing an incomplete cached kernel", "dir", dir, "problem", lerr)
		stale := fmt.Sprintf("%s.stale-%d", dir, time.Now().UnixNano())
		if rerr := os.Rename(dir, stale); rerr != nil {
			return nil, fmt.Errorf("fetch kernel %s: move into cache: %w (and the entry there is incomplete: %v)", pkg, err, lerr)
		}
		_ = os.RemoveAll(stale)
		if err := os.Rename(tmp, dir); err != nil {
			return nil, fmt.Errorf("fetch kernel %s: move into cache: %w", pkg, err)
		}
	}
	log.Info("guest kernel ready", "package", pkg, "release", k.Release, "took", time.Since(start).Round(time.Millisecond))
	return loadCached(dir)
}

var versionedImage = regexp.MustCompile(`^\s*Depends:\s*(linux-image-[0-9][^\s]*)\s*$`)

// kernelPackage asks apt which versioned package the metapackage pulls in.
func kernelPackage(ctx context.Context) (string, error) {
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

// unpackKernel downloads and unpacks pkg and busybox-static below dir,
// and returns the Kernel with paths relative to dir.
func unpackKernel(ctx context.Context, dir, pkg string, log hclog.Logger) (*Kernel, error) {
	args := []string{"download"}
	if os.Geteuid() == 0 {
		// As root, apt drops to _apt, which cannot write a 0700 temp dir.
		args = append(args, "-o", "APT::Sandbox::User=root")
	}
	if _, err := run(ctx, dir, "apt-get", append(args, pkg, BusyboxPackage)...); err != nil {
		return nil, err
	}
	for _, u := range []struct{ glob, into string }{
		{pkg + "_*.deb", "root"},
		{BusyboxPackage + "_*.deb", "busybox"},
	} {
		debs, _ := filepath.Glob(filepath.Join(dir, u.glob))
		if len(debs) != 1 {
			return nil, fmt.Errorf("apt-get download left %d files matching %s in %s", len(debs), u.glob, dir)
		}
		if _, err := run(ctx, "", "dpkg", "-x", debs[0], filepath.Join(dir, u.into)); err != nil {
			return nil, err
		}
		if err := os.Remove(debs[0]); err != nil {
			return nil, err
		}
	}
	k := &Kernel{Package: pkg}
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
		return nil, fmt.Errorf("%s has no bin/busybox", BusyboxPackage)
	}
	if err := checkStatic(filepath.Join(dir, k.Busybox)); err != nil {
		return nil, err
	}
	modDir := filepath.Join(dir, k.ModulesDir)
	if _, err := os.Stat(filepath.Join(modDir, "modules.dep")); err != nil {
		log.Debug("package has no modules.dep: generating it from .modinfo", "dir", modDir)
		warns, err := GenerateModulesDep(modDir)
		if err != nil {
			return nil, err
		}
		for _, w := range warns {
			log.Warn("modules.dep", "warning", w)
		}
	}
	meta, err := json.MarshalIndent(k, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := writeFileAtomic(filepath.Join(dir, kernelMeta), append(meta, '\n')); err != nil {
		return nil, err
	}
	return k, nil
}

// checkStatic fails unless p is an x86-64 ELF without a program interpreter.
func checkStatic(p string) error {
	f, err := elf.Open(p)
	if err != nil {
		return fmt.Errorf("check %s: %w", p, err)
	}
	defer f.Close()
	if f.Machine != elf.EM_X86_64 {
		return fmt.Errorf("check %s: machine %v, want x86-64", p, f.Machine)
	}
	for _, prog := range f.Progs {
		if prog.Type == elf.PT_INTERP {
			return fmt.Errorf("check %s: dynamically linked; the initramfs has no libc", p)
		}
	}
	return nil
}

func rel(base, p string) string {
	r, err := filepath.Rel(base, p)
	if err != nil {
		return p
	}
	return r
}

// loadCached reads a complete cache entry and makes its paths absolute.
func loadCached(dir string) (*Kernel, error) {
	b, err := os.ReadFile(filepath.Join(dir, kernelMeta))
	if err != nil {
		return nil, err
	}
	var k Kernel
	if err := json.Unmarshal(b, &k); err != nil {
		return nil, fmt.Errorf("read %s: %w", filepath.Join(dir, kernelMeta), err)
	}
	for _, p := range []*string{&k.Vmlinuz, &k.ModulesDir, &k.Busybox} {
		if *p == "" || filepath.IsAbs(*p) {
			return nil, fmt.Errorf("read %s: bad path %q", filepath.Join(dir, kernelMeta), *p)
		}
		*p = filepath.Join(dir, *p)
		if _, err := os.Stat(*p); err != nil {
			return nil, fmt.Errorf("cached kernel in %s is incomplete: %w", dir, err)
		}
	}
	return &k, nil
}

// newestCached is the most recently fetched complete cache entry.
func newestCached(cacheDir string) (*Kernel, error) {
	metas, _ := filepath.Glob(filepath.Join(cacheDir, "linux-image-*", kernelMeta))
	var best *Kernel
	var bestTime time.Time
	for _, m := range metas {
		fi, err := os.Stat(m)
		if err != nil {
			continue
		}
		if k, err := loadCached(filepath.Dir(m)); err == nil && (best == nil || fi.ModTime().After(bestTime)) {
			best, bestTime = k, fi.ModTime()
		}
	}
	if best == nil {
		return nil, errors.New("no complete cached kernel")
	}
	return best, nil
}

// removeStaleFetches deletes temp dirs of fetches that died over an hour ago.
func removeStaleFetches(cacheDir string, log hclog.Logger) {
	tmps, _ := filepath.Glob(filepath.Join(cacheDir, ".fetch-*"))
	for _, t := range tmps {
		if fi, err := os.Stat(t); err == nil && time.Since(fi.ModTime()) > time.Hour {
			log.Debug("removing stale fetch dir", "dir", t)
			_ = os.RemoveAll(t)
		}
	}
}

// run runs a command and returns its stdout; the error has its stderr.
func run(ctx context.Context, dir, name string, args ...string) (string, error) {
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	if err := cmd.Run(); err != nil {
		if msg := strings.TrimSpace(stderr.String()); msg != "" {
			err = fmt.Errorf("%w: %s", err, msg)
		}
		return stdout.String(), fmt.Errorf("run %s %s: %w", name, strings.Join(args, " "), err)
	}
	return stdout.String(), nil
}
