//go:build traffic

package vmtest

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/linerate/linerate/cmd/linerate/internal/vm"
)

// qemuProcesses lists running qemu processes whose command line mentions s.
func qemuProcesses(t *testing.T, s string) []string {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.Contains(string(b), vm.QEMU) && strings.Contains(string(b), s) {
			out = append(out, e.Name())
		}
	}
	return out
}

// runGuest runs g with TMPDIR in a fresh directory and checks that Run
// left neither files nor a qemu process behind.
func runGuest(t *testing.T, g *Guest) (*Result, error) {
	t.Helper()
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	res, err := g.Run(context.Background())
	if left, _ := os.ReadDir(tmp); len(left) > 0 {
		t.Errorf("Run left %d entries in TMPDIR, first %s", len(left), left[0].Name())
	}
	if procs := qemuProcesses(t, tmp); len(procs) > 0 {
		t.Errorf("qemu still running after Run: pids %v", procs)
	}
	return res, err
}

// A guest runs the script with the modules loaded and the files in
// place, and its exit status comes back.
func TestGuestRun(t *testing.T) {
	k := SkipUnlessAvailable(t)
	data := filepath.Join(t.TempDir(), "data")
	if err := os.WriteFile(data, []byte("from the host\n"), 0o750); err != nil {
		t.Fatal(err)
	}
	res, err := runGuest(t, &Guest{
		Kernel:  k,
		Modules: []string{"veth", "pktgen"},
		Files:   map[string]string{"/data/hello": data},
		Script: `cat /data/hello
stat -c 'mode %a' /data/hello
test -e /proc/net/pktgen/pgctrl && echo pktgen-loaded
ip link add lrvt-a type veth peer name lrvt-b && echo veth-created
grep -c . /proc/modules
test -w /tmp && test -k /tmp && echo tmp-sticky
echo "uname $(uname -r)"
exit 7`,
		Timeout: 2 * time.Minute,
		Log:     TestLogger(t),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("guest ran %s", res.Duration.Round(time.Millisecond))
	if res.ExitCode != 7 {
		t.Errorf("exit code %d, want 7", res.ExitCode)
	}
	for _, want := range []string{"from the host\n", "mode 750\n", "pktgen-loaded\n", "veth-created\n", "tmp-sticky\n", "uname " + k.Release + "\n"} {
		if !strings.Contains(res.Output, want) {
			t.Errorf("output lacks %q:\n%s", want, res.Output)
		}
	}
	if !strings.Contains(res.Console, res.Output) {
		t.Error("the output is not part of the console")
	}
}

// A guest that hangs is killed at its timeout, loudly.
func TestGuestRunTimeout(t *testing.T) {
	k := SkipUnlessAvailable(t)
	start := time.Now()
	_, err := runGuest(t, &Guest{Kernel: k, Script: "echo about-to-hang; sleep 600", Timeout: 8 * time.Second})
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("err %v, want ErrTimeout", err)
	}
	if took := time.Since(start); took > 30*time.Second {
		t.Errorf("Run returned %s after an 8s timeout", took)
	}
	if !strings.Contains(err.Error(), "--- guest console") {
		t.Errorf("error has no console tail: %v", err)
	}
	t.Logf("error as reported:\n%v", err)
}

// A guest that stops without reporting (here: powered off by the script)
// is an error with the console in it.
func TestGuestRunNoExit(t *testing.T) {
	k := SkipUnlessAvailable(t)
	_, err := runGuest(t, &Guest{Kernel: k, Script: "echo powering-off-early; poweroff -f", Timeout: 2 * time.Minute})
	if !errors.Is(err, ErrNoExit) {
		t.Fatalf("err %v, want ErrNoExit", err)
	}
	if !strings.Contains(err.Error(), "powering-off-early") {
		t.Errorf("error lacks the console tail: %v", err)
	}
}
