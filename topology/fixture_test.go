package topology

import (
	"path/filepath"
	"testing"

	"github.com/linerate/linerate/internal/fsfixture"
)

// fixture unpacks testdata/<name>.tree into a temporary directory and
// opens it as a host root. The returned directory is that root.
func fixture(t *testing.T, name string) (*DirRoot, string) {
	t.Helper()
	dir := t.TempDir()
	if err := fsfixture.UnpackFile(filepath.Join("testdata", name+".tree"), dir); err != nil {
		t.Fatalf("fixture %s: %v", name, err)
	}
	r, err := OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r, dir
}
