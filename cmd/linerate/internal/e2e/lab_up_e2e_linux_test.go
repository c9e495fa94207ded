//go:build linux && traffic

package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/linerate/linerate/cmd/linerate/internal/lab"
	"github.com/linerate/linerate/coordinator"
	"github.com/linerate/linerate/internal/netns/nstest"
)

// startLabUp runs `linerate lab up` (1 sender and 1 receiver unless args
// say otherwise) and returns once it printed how to reach the agents
// (its stdout lines).
func startLabUp(t *testing.T, bin, name string, args ...string) (*exec.Cmd, []string) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"lab", "up", "--name", name, "--senders", "1", "--receivers", "1", "--log-level", "warn"}, args...)...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string)
	go func() {
		buf := make([]byte, 64<<10)
		var acc string
		for {
			n, err := stdout.Read(buf)
			acc += string(buf[:n])
			for {
				i := strings.IndexByte(acc, '\n')
				if i < 0 {
					break
				}
				lines <- acc[:i]
				acc = acc[i+1:]
			}
			if err != nil {
				close(lines)
				return
			}
		}
	}()
	var out []string
	ready := 90 * time.Second
	if slices.Contains(args, lab.HostsVM) {
		ready = 5 * time.Minute // guests boot under TCG
	}
	timeout := time.After(ready)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				err := cmd.Wait()
				t.Fatalf("lab up ended: %v\n%s\n%s%s", err, strings.Join(out, "\n"), stderr.String(), labDown(bin, name))
			}
			out = append(out, l)
			if strings.HasPrefix(l, "Ctrl-C removes the lab") {
				go func() {
					for range lines {
					}
				}()
				return cmd, out
			}
		case <-timeout:
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			t.Fatalf("lab up not ready after %s:\n%s\n%s%s", ready, strings.Join(out, "\n"), stderr.String(), labDown(bin, name))
		}
	}
}

// labUpFor brings a lab up for the rest of t (startLabUp with args;
// Ctrl-C and lab down at t's end) and returns its process and the flags
// that reach its agents (memberFlags).
func labUpFor(t *testing.T, bin, name string, args ...string) (*exec.Cmd, []string) {
	t.Helper()
	up, out := startLabUp(t, bin, name, args...)
	t.Cleanup(func() {
		if up.ProcessState == nil {
			_ = up.Process.Signal(syscall.SIGINT)
			_ = up.Wait()
		}
		_ = exec.Command(bin, "lab", "down", "--name", name).Run()
	})
	return up, memberFlags(t, out)
}

// memberFlags are the flags that reach a lab's agents, as `lab up`
// printed them (its stdout lines) after `linerate members`.
func memberFlags(t *testing.T, out []string) []string {
	t.Helper()
	for _, l := range out {
		if f, ok := strings.CutPrefix(strings.TrimSpace(l), "linerate members "); ok {
			return strings.Fields(f)
		}
	}
	t.Fatalf("lab up printed no members command:\n%s", strings.Join(out, "\n"))
	return nil
}

// labDown removes the lab a failed lab up left (its caller registered
// no cleanup yet) and returns what it is worth printing: the end of each
// VM guest's qemu and console logs, and what lab down said.
func labDown(bin, name string) string {
	var b strings.Builder
	logs, _ := filepath.Glob(filepath.Join(lab.DefaultDir(name), "*", "*.log"))
	for _, l := range logs {
		data, _ := os.ReadFile(l)
		if len(data) > 2000 {
			data = data[len(data)-2000:]
		}
		fmt.Fprintf(&b, "\n--- %s (end):\n%s", l, data)
	}
	o, err := exec.Command(bin, "lab", "down", "--name", name).CombinedOutput()
	fmt.Fprintf(&b, "\n--- lab down: %v\n%s", err, o)
	return b.String()
}

// TestLabUpMembersDown checks that `lab up` keeps a lab whose agents
// `linerate members` lists (with the flags lab up printed) until Ctrl-C
// removes it.
func TestLabUpMembersDown(t *testing.T) {
	nstest.SkipUnlessRoot(t)
	bin := Binary(t)
	name := fmt.Sprintf("u%d", os.Getpid()%10000)
	cmd, out := startLabUp(t, bin, name)
	flags := memberFlags(t, out)
	mo, err := exec.Command(bin, append([]string{"members", "--json", "--wait", "2", "--log-level", "warn"}, flags...)...).Output()
	if err != nil {
		t.Fatalf("members: %v", err)
	}
	var ms []coordinator.Member
	if err := json.Unmarshal(mo, &ms); err != nil {
		t.Fatalf("members JSON: %v\n%s", err, mo)
	}
	if len(ms) != 2 || ms[0].Name != "r1" || ms[0].Role != "receiver" || ms[1].Name != "s1" || ms[1].Health != "serving" || ms[1].Iface != "data0" {
		t.Errorf("members: %+v", ms)
	}
	_ = cmd.Process.Signal(syscall.SIGINT)
	if err := cmd.Wait(); err != nil {
		t.Errorf("lab up after Ctrl-C: %v", err)
	}
	assertNoLab(t, name, lab.DefaultDir(name))
}

// agentExitBound is how long an agent may take to exit by itself once the
// process that started it is gone (SIGTERM from its parent-death signal,
// then its own shutdown).
const agentExitBound = 15 * time.Second

// TestLabUpKilled checks the README's claim that the agents die with a
// coordinator killed outright: SIGKILL the `lab up` process that started
// them, and every agent process exits by itself (parent-death signal)
// within agentExitBound, before any `lab down`; the namespaces stay until
// `lab down` removes them.
func TestLabUpKilled(t *testing.T) {
	nstest.SkipUnlessRoot(t)
	bin := Binary(t)
	name := fmt.Sprintf("z%d", os.Getpid()%10000)
	dir := lab.DefaultDir(name)
	cmd, _ := startLabUp(t, bin, name)
	agents := labProcesses(dir)
	if len(agents) != 2 {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		_ = exec.Command(bin, "lab", "down", "--name", name).Run()
		t.Fatalf("lab up of 1 sender and 1 receiver runs %d agent processes (%v), want 2", len(agents), agents)
	}
	t0 := time.Now()
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	for len(alive(agents)) > 0 && time.Since(t0) < agentExitBound {
		time.Sleep(50 * time.Millisecond)
	}
	if left := alive(agents); len(left) > 0 {
		t.Errorf("agents %v still running %s after their lab up was killed (parent-death signal)", left, agentExitBound)
		for _, pid := range left {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	} else {
		t.Logf("agents %v exited %s after lab up was killed", agents, time.Since(t0).Round(time.Millisecond))
	}
	if left, _ := lab.Leftovers(); !slices.ContainsFunc(left, func(n string) bool { return strings.HasPrefix(n, lab.Prefix(name)) }) {
		t.Fatal("a killed lab up left nothing to clean: the test proves nothing")
	}
	if o, err := exec.Command(bin, "lab", "down", "--name", name).CombinedOutput(); err != nil {
		t.Fatalf("lab down: %v\n%s", err, o)
	}
	deadline := time.Now().Add(5 * time.Second)
	for len(lab.Remains(name, lab.DefaultDir(name))) > 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	assertNoLab(t, name, lab.DefaultDir(name))
}

// labProcesses are the pids of the processes running from the lab
// directory dir (its agents).
func labProcesses(dir string) []int {
	var pids []int
	for _, p := range lab.Processes(dir) {
		pids = append(pids, p.PID)
	}
	return pids
}

// alive are the pids of pids still running: neither gone nor a zombie
// waiting for whoever adopted it to reap it.
func alive(pids []int) []int {
	var out []int
	for _, pid := range pids {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		// pid (comm) state …: comm may hold spaces and parentheses.
		if i := strings.LastIndexByte(string(b), ')'); i >= 0 && i+2 < len(b) && b[i+2] == 'Z' {
			continue
		}
		out = append(out, pid)
	}
	return out
}
