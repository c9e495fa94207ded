//go:build linux && traffic

package e2e

import (
	"os"
	"testing"
)

// TestMain runs the tests through Main: the binary they share is removed
// at the end.
func TestMain(m *testing.M) { os.Exit(Main(m)) }
