package vm

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
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"
)

// Debian packages and settings of the guests.
const (
	// KernelMetapackage depends on the current versioned kernel image
	// package (linux-image-6.1.0-NN-cloud-amd64 on bookworm); errors name
	// what it depends on when the pinned kernel has left the archive.
	KernelMetapackage = "linux-image-cloud-amd64"
	// BusyboxPackage carries the statically linked busybox of the initramfs.
	BusyboxPackage = "busybox-static"
	// CacheEnv overrides the cache directory of DefaultCacheDir.
	CacheEnv = "LINERATE_VM_CACHE"
	// SystemCacheDir is the cache of a root process.
	SystemCacheDir = "/var/cache/linerate/vm"
)

// ErrNoKernel is returned when no kernel could be fetched or found in the
// cache.
var ErrNoKernel = errors.New("no guest kernel")

// Kernel is an unpacked Debian kernel image package and the static
// busybox that goes with it into every initramfs.
type Kernel struct {
	Package    string `json:"package"` // "linux-image-6.1.0-57-cloud-amd64"
	Release    string `json:"release"` // the guest's uname -r: "6.1.0-57-cloud-amd64"
	Vmlinuz    string `json:"vmlinuz"` // bzImage for qemu -kernel
	ModulesDir string `json:"modules"` // lib/modules/<release>, with a modules.dep
	Busybox    string `json:"busybox"` // statically linked busybox from busybox-static
	// Verified are the pins whose .debs this entry was unpacked from, each
	// checked against its sha256; an entry verified against other pins is
	// fetched again.
	Verified []Pin `json:"verified,omitempty"`
}

// Modules returns the kernel's module dependency table.
func (k *Kernel) Modules() (*ModuleDB, error) { return LoadModuleDB(k.ModulesDir) }

// VerifiedBy reports whether the entry was unpacked from exactly the
// packages of p.
func (k *Kernel) VerifiedBy(p Pins) bool {
	want := p.List()
	if len(k.Verified) != len(want) {
		return false
	}
	for i := range want {
		if k.Verified[i] != want[i] {
			return false
		}
	}
	return true
}

// DefaultCacheDir is where an installed binary keeps the kernel:
// $LINERATE_VM_CACHE when set, else SystemCacheDir for root, else
// linerate/vm in the user's cache directory ($XDG_CACHE_HOME or
// ~/.cache); never a directory found from the working directory.
func DefaultCacheDir() string {
	return defaultCacheDir(os.Getenv, os.Geteuid(), os.UserCacheDir)
}

func defaultCacheDir(getenv func(string) string, euid int, userCache func() (string, error)) string {
	if d := getenv(CacheEnv); d != "" {
		return d
	}
	if euid == 0 {
		return SystemCacheDir
	}
	if d, err := userCache(); err == nil {
		return filepath.Join(d, "linerate", "vm")
	}
	return filepath.Join(os.TempDir(), fmt.Sprintf("linerate-vm-%d", euid))
}

const kernelMeta = "kernel.json"

// FetchKernel returns the pinned kernel (pins.txt), unpacked in cacheDir
// (DefaultCacheDir when empty). The first call per pin downloads the
// kernel and busybox-static with `apt-get download package=version`
// (needs apt's package lists: `apt-get update`, no root), checks each
// .deb's sha256 against the pin, unpacks them with `dpkg -x` and writes
// modules.dep; later calls only read the cache, and need no network. An
// entry verified against other pins is fetched again. Concurrent fetches
// into one cache are safe.
func FetchKernel(ctx context.Context, cacheDir string, log hclog.Logger) (*Kernel, error) {
	pins, err := DefaultPins()
	if err != nil {
		return nil, fmt.Errorf("fetch kernel: %w", err)
	}
	if cacheDir == "" {
		cacheDir = DefaultCacheDir()
	}
	if log == nil {
		log = hclog.NewNullLogger()
	}
	return (&fetcher{cacheDir: cacheDir, pins: pins, run: run, log: log}).fetch(ctx)
}

// CheckStatic fails unless p is an x86-64 ELF without a program
// interpreter: what runs in an initramfs, which has no libc.
func CheckStatic(p string) error {
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
