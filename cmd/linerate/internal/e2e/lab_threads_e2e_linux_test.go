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
	name := fmt.Sprintf("t%d", os.Getpid()%10000)
	res, stderr := labRunFails(t, Binary(t), name, "--count", "1000", "--threads", "40")
	want := fmt.Sprintf("s1 has %d CPUs: --threads at most %d", runtime.NumCPU(), runtime.NumCPU())
	if !strings.Contains(res.Error, want) || strings.Count(res.Error+stderr, "one thread per CPU") > 0 {
		t.Errorf("error %q, stderr %q; want one line with %q", res.Error, stderr, want)
	}
}

// labRunFails runs `linerate lab run --json` of one sender and one
// receiver with args, which must fail (a non-zero exit, a failed result),
// and checks that the lab left nothing behind; it returns the result and
// what the command wrote on stderr.
func labRunFails(t *testing.T, bin, name string, args ...string) (*coordinator.Result, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append([]string{"lab", "run", "--name", name, "--senders", "1", "--receivers", "1", "--json", "--log-level", "warn",
		"--results-dir", t.TempDir()}, args...)...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var res coordinator.Result
	if jerr := json.Unmarshal([]byte(stdout.String()), &res); jerr != nil || err == nil || res.Status != coordinator.StatusFailed {
		t.Fatalf("lab run %v: exit %v, status %q (%v)\nstdout:\n%s\nstderr:\n%s", args, err, res.Status, jerr, stdout.String(), stderr.String())
	}
	assertNoLab(t, name, lab.DefaultDir(name))
	return &res, stderr.String()
}
