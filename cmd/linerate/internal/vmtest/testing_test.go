package vmtest

import (
	"os"
	"path/filepath"
	"testing"
)

func TestCacheDir(t *testing.T) {
	t.Setenv(CacheEnv, "/somewhere/else")
	if got := CacheDir(); got != "/somewhere/else" {
		t.Errorf("with %s set: %q", CacheEnv, got)
	}
	t.Setenv(CacheEnv, "")
	got := CacheDir()
	if filepath.Base(got) != "vmtest" || filepath.Base(filepath.Dir(got)) != ".cache" {
		t.Fatalf("cache dir %q, want <module root>/.cache/vmtest", got)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(filepath.Dir(got)), "go.mod")); err != nil {
		t.Errorf("cache dir %q is not at the module root: %v", got, err)
	}
}
