//go:build linux && traffic

package lab

import (
	"os"
	"testing"

	"github.com/linerate/linerate/cmd/linerate/internal/e2e"
)

// TestMain runs the tests through e2e.Main: the linerate binary the
// session test runs its agents with is built once and removed at the end.
func TestMain(m *testing.M) { os.Exit(e2e.Main(m)) }
