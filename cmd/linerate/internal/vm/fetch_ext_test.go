package vm_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/linerate/linerate/cmd/linerate/internal/vm"
	"github.com/linerate/linerate/cmd/linerate/internal/vmtest"
)

// An incomplete cache entry (a fetch interrupted after the move, or files
// removed by hand) is replaced by a fresh fetch, not reported forever.
func TestFetchKernelReplacesIncompleteEntry(t *testing.T) {
	k := vmtest.SkipUnlessAvailable(t)
	cache := t.TempDir()
	dir := filepath.Join(cache, k.Package)
	if err := os.MkdirAll(filepath.Join(dir, "busybox", "usr"), 0o755); err != nil {
		t.Fatal(err)
	}
	meta := `{"package":"` + k.Package + `","release":"x","vmlinuz":"root/boot/vmlinuz-x","modules":"root/lib/modules/x","busybox":"busybox/bin/busybox"}`
	if err := os.WriteFile(filepath.Join(dir, vm.KernelMeta), []byte(meta), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := vm.FetchKernel(context.Background(), cache, vmtest.TestLogger(t))
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
