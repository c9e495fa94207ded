package vm

import (
	"errors"
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
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	userCache := func() (string, error) { return "/home/u/.cache", nil }
	noUserCache := func() (string, error) { return "", errors.New("neither $XDG_CACHE_HOME nor $HOME is defined") }
	for _, tc := range []struct {
		name      string
		env       string
		euid      int
		userCache func() (string, error)
		want      string
	}{
		{"env wins over root", "/somewhere/else", 0, userCache, "/somewhere/else"},
		{"root", "", 0, userCache, SystemCacheDir},
		{"user", "", 1000, userCache, "/home/u/.cache/linerate/vm"},
		{"user without a cache dir", "", 1000, noUserCache, filepath.Join(os.TempDir(), "linerate-vm-1000")},
	} {
		env[CacheEnv] = tc.env
		if got := defaultCacheDir(getenv, tc.euid, tc.userCache); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
	t.Setenv(CacheEnv, "/from/env")
	if got := DefaultCacheDir(); got != "/from/env" {
		t.Errorf("DefaultCacheDir with %s set: %q", CacheEnv, got)
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
	if err := CheckStatic(notELF); err == nil {
		t.Error("a shell script passed as a static ELF binary")
	}
	// /bin/sh of a Debian amd64 host (dash) is dynamically linked.
	if runtime.GOOS == "linux" && runtime.GOARCH == "amd64" {
		if err := CheckStatic("/bin/sh"); err == nil || !strings.Contains(err.Error(), "dynamically linked") {
			t.Errorf("CheckStatic(/bin/sh) = %v, want a dynamically linked error", err)
		}
	}
}
