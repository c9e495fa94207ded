//go:build linux && traffic

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/linerate/linerate/coordinator"
	"github.com/linerate/linerate/internal/lab"
	"github.com/linerate/linerate/internal/netns/nstest"
)

// startLabUp runs `linerate lab up` and returns once it printed how to
// reach the agents (its stdout lines).
func startLabUp(t *testing.T, bin, name string) (*exec.Cmd, []string) {
	t.Helper()
	cmd := exec.Command(bin, "lab", "up", "--name", name, "--senders", "1", "--receivers", "1", "--log-level", "warn")
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
	timeout := time.After(90 * time.Second)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("lab up ended: %v\n%s\n%s", cmd.Wait(), strings.Join(out, "\n"), stderr.String())
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
			cmd.Process.Kill()
			t.Fatalf("lab up not ready:\n%s\n%s", strings.Join(out, "\n"), stderr.String())
		}
	}
}

// TestLabUpMembersDown checks that `lab up` keeps a lab whose agents
// `linerate members` lists (with the flags lab up printed) until Ctrl-C
// removes it, and that a `lab up` killed outright leaves a lab that
// `lab down` removes.
func TestLabUpMembersDown(t *testing.T) {
	nstest.SkipUnlessRoot(t)
	bin := buildBinary(t)
	name := fmt.Sprintf("u%d", os.Getpid()%10000)
	cmd, out := startLabUp(t, bin, name)
	var flags []string
	for _, l := range out {
		if f, ok := strings.CutPrefix(strings.TrimSpace(l), "linerate members "); ok {
			flags = strings.Fields(f)
		}
	}
	if flags == nil {
		t.Fatalf("lab up printed no members command:\n%s", strings.Join(out, "\n"))
	}
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

	// Killed outright: the agents die with it (parent-death signal), the
	// namespaces stay until lab down.
	cmd, _ = startLabUp(t, bin, name)
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
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
