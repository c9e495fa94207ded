//go:build linux && traffic

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/linerate/linerate/cmd/linerate/internal/lab"
	"github.com/linerate/linerate/coordinator"
	"github.com/linerate/linerate/internal/netns/nstest"
)

// --threads beyond a lab sender's CPUs fails the run with one line naming
// the limit, not one error per surplus thread, and leaves nothing behind.
func TestLabRunThreadsBeyondCPUs(t *testing.T) {
	nstest.SkipUnlessRoot(t)
	bin := Binary(t)
	name := fmt.Sprintf("t%d", os.Getpid()%10000)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "lab", "run", "--name", name, "--senders", "1", "--receivers", "1", "--json", "--log-level", "warn",
		"--results-dir", t.TempDir(), "--count", "1000", "--threads", "40")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var res coordinator.Result
	if jerr := json.Unmarshal([]byte(stdout.String()), &res); jerr != nil || err == nil || res.Status != coordinator.StatusFailed {
		t.Fatalf("exit %v, status %q (%v)\nstdout:\n%s\nstderr:\n%s", err, res.Status, jerr, stdout.String(), stderr.String())
	}
	want := fmt.Sprintf("s1 has %d CPUs: --threads at most %d", runtime.NumCPU(), runtime.NumCPU())
	if !strings.Contains(res.Error, want) || strings.Count(res.Error+stderr.String(), "one thread per CPU") > 0 {
		t.Errorf("error %q, stderr %q; want one line with %q", res.Error, stderr.String(), want)
	}
	assertNoLab(t, name, lab.DefaultDir(name))
}
