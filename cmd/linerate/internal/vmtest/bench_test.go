//go:build linux && traffic

package vmtest

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/linerate/linerate/cmd/linerate/internal/e2e"
)

// TestBenchPktgenDriver boots a guest with the real pktgen and runs
// bench/pktgen-driver.sh: shell-configured pktgen against `linerate send
// --backend kernel`, alternately. It prints figures; it asserts nothing
// about speed. Run it with `make bench-pktgen` (LINERATE_BENCH=1).
func TestBenchPktgenDriver(t *testing.T) {
	if os.Getenv("LINERATE_BENCH") != "1" {
		t.Skip("benchmark: run with make bench-pktgen (LINERATE_BENCH=1)")
	}
	k := SkipUnlessAvailable(t)
	bin := e2e.Binary(t)
	script, err := filepath.Abs("../../../../bench/pktgen-driver.sh")
	if err != nil {
		t.Fatal(err)
	}
	g := &Guest{
		Kernel:  k,
		Modules: []string{"veth", "pktgen"},
		Files:   map[string]string{"/bin/linerate": bin, "/bin/pktgen-driver.sh": script},
		CPUs:    2,
		Memory:  "512M",
		Script:  "ROUNDS=" + envOr("ROUNDS", "5") + " COUNT=" + envOr("COUNT", "300000") + " /bin/pktgen-driver.sh\n",
		Timeout: 10 * time.Minute,
		Log:     TestLogger(t),
	}
	res, err := g.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("benchmark output (exit %d):\n%s", res.ExitCode, res.Output)
	if res.ExitCode != 0 {
		t.Fatalf("benchmark script failed; console:\n%s", res.Console)
	}
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}
