//go:build linux && traffic

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/linerate/linerate/coordinator"
)

// TestCoordinatorBeforeAgents starts `linerate members --wait 2` first
// and its two agents (real processes, on loopback, with certificates and
// the gossip key) 2.5 s later: the coordinator's join retries until its
// seed is up, so the command lists both agents, serving. A coordinator
// whose seed never comes up gives up at its --join-timeout with the seed,
// the time it tried and the last error.
func TestCoordinatorBeforeAgents(t *testing.T) {
	bin := Binary(t)
	tls := t.TempDir()
	for _, args := range [][]string{
		{"certs", "init", "--dir", tls},
		{"certs", "issue", "--dir", tls, "--name", "a1", "--role", "agent", "--host", "127.0.0.1"},
		{"certs", "issue", "--dir", tls, "--name", "a2", "--role", "agent", "--host", "127.0.0.1"},
		{"certs", "issue", "--dir", tls, "--name", "coordinator", "--role", "coordinator"},
	} {
		if out, err := exec.Command(bin, args...).CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
	}
	// Addresses of loopback's /8 of this process's own, on gossip's
	// default port: nothing else listens there.
	pid := syscall.Getpid()
	seed := fmt.Sprintf("127.%d.%d.1:7946", pid>>8&255, pid&255)
	dead := fmt.Sprintf("127.%d.%d.2:7946", pid>>8&255, pid&255)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	t0 := time.Now()
	members := exec.CommandContext(ctx, bin, "members", "--json", "--wait", "2", "--join", seed, "--bind", "127.0.0.1:0",
		"--tls-dir", tls, "--allow-ca-key", "--join-timeout", "30s", "--timeout", "30s")
	var stdout, stderr strings.Builder
	members.Stdout, members.Stderr = &stdout, &stderr
	if err := members.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2500 * time.Millisecond)
	for _, a := range []struct{ name, bind string }{{"a1", seed}, {"a2", "127.0.0.1:0"}} {
		startAgentProcess(t, bin, a.name, "agent", "--name", a.name, "--role", "receiver", "--iface", "lo", "--allow-mgmt-iface",
			"--bind", a.bind, "--grpc", "127.0.0.1:0", "--join", seed, "--tls-dir", tls, "--allow-ca-key",
			"--state-dir", t.TempDir(), "--log-level", "warn")
	}
	if err := members.Wait(); err != nil {
		t.Fatalf("members started 2.5 s before its agents: %v\n%s", err, stderr.String())
	}
	t.Logf("members listed both agents %s after it started", time.Since(t0).Round(time.Millisecond))
	var ms []coordinator.Member
	if err := json.Unmarshal([]byte(stdout.String()), &ms); err != nil {
		t.Fatalf("members JSON: %v\n%s", err, stdout.String())
	}
	if len(ms) != 2 || ms[0].Name != "a1" || ms[1].Name != "a2" || ms[0].Health != "serving" || ms[1].Health != "serving" {
		t.Errorf("members: %+v\n%s", ms, stderr.String())
	}
	if !strings.Contains(stderr.String(), "waiting for the cluster: no seed answered yet") || strings.Contains(stderr.String(), "[WARN]") {
		t.Errorf("want the wait said once, and no warning:\n%s", stderr.String())
	}

	// No agent at all: the coordinator gives up at its deadline.
	t0 = time.Now()
	out, err := exec.CommandContext(ctx, bin, "members", "--join", dead, "--bind", "127.0.0.1:0",
		"--tls-dir", tls, "--allow-ca-key", "--join-timeout", "3s").CombinedOutput()
	took := time.Since(t0)
	if err == nil || !strings.Contains(string(out), "no seed answered in 3") || !strings.Contains(string(out), "last error") {
		t.Errorf("members without agents: %v\n%s", err, out)
	}
	if took < 3*time.Second || took > 15*time.Second {
		t.Errorf("members without agents gave up after %s, want about 3 s", took)
	}
}
