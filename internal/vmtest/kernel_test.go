package vmtest

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestVersionedImage(t *testing.T) {
	out := "linux-image-cloud-amd64\n  Depends: linux-image-6.1.0-57-cloud-amd64\n  Depends: initramfs-tools\n"
	var got string
	for _, l := range strings.Split(out, "\n") {
		if m := versionedImage.FindStringSubmatch(l); m != nil {
			got = m[1]
			break
		}
	}
	if got != "linux-image-6.1.0-57-cloud-amd64" {
		t.Errorf("package %q", got)
	}
	for _, l := range []string{"  Depends: linux-image-cloud-amd64", "  Depends: <linux-image-6.1>", "  Recommends: linux-image-6.1.0-1-amd64"} {
		if versionedImage.MatchString(l) {
			t.Errorf("%q taken for a versioned image", l)
		}
	}
}

func TestDefaultCacheDir(t *testing.T) {
	t.Setenv(CacheEnv, "/somewhere/else")
	if got := DefaultCacheDir(); got != "/somewhere/else" {
		t.Errorf("with %s set: %q", CacheEnv, got)
	}
	t.Setenv(CacheEnv, "")
	got := DefaultCacheDir()
	if filepath.Base(got) != "vmtest" || filepath.Base(filepath.Dir(got)) != ".cache" {
		t.Fatalf("default cache dir %q, want <module root>/.cache/vmtest", got)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(filepath.Dir(got)), "go.mod")); err != nil {
		t.Errorf("default cache dir %q is not at the module root: %v", got, err)
	}
}

func TestLoadCached(t *testing.T) {
	dir := t.TempDir()
	if _, err := loadCached(dir); err == nil {
		t.Error("an empty dir loaded as a kernel")
	}
	meta := `{"package":"linux-image-x","release":"x","vmlinuz":"root/boot/vmlinuz-x","modules":"root/lib/modules/x","busybox":"busybox/bin/busybox"}`
	if err := os.WriteFile(filepath.Join(dir, kernelMeta), []byte(meta), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := loadCached(dir); err == nil || !strings.Contains(err.Error(), "incomplete") {
		t.Errorf("a cache entry without its files: %v", err)
	}
	for _, p := range []string{"root/boot/vmlinuz-x", "root/lib/modules/x/modules.dep", "busybox/bin/busybox"} {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	k, err := loadCached(dir)
	if err != nil {
		t.Fatal(err)
	}
	if k.Vmlinuz != filepath.Join(dir, "root/boot/vmlinuz-x") || k.ModulesDir != filepath.Join(dir, "root/lib/modules/x") {
		t.Errorf("paths not made absolute: %+v", k)
	}
	if err := os.WriteFile(filepath.Join(dir, kernelMeta), []byte(`{"vmlinuz":"/abs","modules":"m","busybox":"b"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := loadCached(dir); err == nil || !strings.Contains(err.Error(), "bad path") {
		t.Errorf("absolute path in the cache metadata: %v", err)
	}
}

func TestCheckStatic(t *testing.T) {
	notELF := filepath.Join(t.TempDir(), "x")
	if err := os.WriteFile(notELF, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := checkStatic(notELF); err == nil {
		t.Error("a shell script passed as a static ELF binary")
	}
	// /bin/sh of a Debian amd64 host (dash) is dynamically linked.
	if runtime.GOOS == "linux" && runtime.GOARCH == "amd64" {
		if err := checkStatic("/bin/sh"); err == nil || !strings.Contains(err.Error(), "dynamically linked") {
			t.Errorf("checkStatic(/bin/sh) = %v, want a dynamically linked error", err)
		}
	}
}

// An incomplete cache entry (a fetch interrupted after the move, or files
// removed by hand) is replaced by a fresh fetch, not reported forever.
func TestFetchKernelReplacesIncompleteEntry(t *testing.T) {
	k := SkipUnlessAvailable(t)
	cache := t.TempDir()
	dir := filepath.Join(cache, k.Package)
	if err := os.MkdirAll(filepath.Join(dir, "busybox", "usr"), 0o755); err != nil {
		t.Fatal(err)
	}
	meta := `{"package":"` + k.Package + `","release":"x","vmlinuz":"root/boot/vmlinuz-x","modules":"root/lib/modules/x","busybox":"busybox/bin/busybox"}`
	if err := os.WriteFile(filepath.Join(dir, kernelMeta), []byte(meta), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := FetchKernel(context.Background(), cache, TestLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(got.Busybox); err != nil || got.Release != k.Release {
		t.Fatalf("fetched %+v: %v", got, err)
	}
	if stale, _ := filepath.Glob(filepath.Join(cache, "*.stale-*")); len(stale) != 0 {
		t.Errorf("stale entries left: %v", stale)
	}
}
