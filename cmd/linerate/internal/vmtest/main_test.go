//go:build linux && traffic

package vmtest

import (
	"os"
	"testing"

	"github.com/linerate/linerate/cmd/linerate/internal/e2e"
)

// TestMain runs the tests through e2e.Main: the linerate binary the
// guests hold is built once and removed at the end.
func TestMain(m *testing.M) { os.Exit(e2e.Main(m)) }
