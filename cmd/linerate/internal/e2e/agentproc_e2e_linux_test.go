//go:build linux && traffic

package e2e

import (
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// startAgentProcess starts the binary with args as the agent name, its
// output kept in the returned log; when the test ends it gets SIGTERM
// and must exit cleanly within agentExitBound (else it is killed and
// the test fails).
func startAgentProcess(t *testing.T, bin, name string, args ...string) *strings.Builder {
	t.Helper()
	return startAgentCmd(t, name, exec.Command(bin, args...))
}

// startAgentCmd is startAgentProcess of a command made already (such as
// one in a lab host's namespace).
func startAgentCmd(t *testing.T, name string, agent *exec.Cmd) *strings.Builder {
	t.Helper()
	log := &strings.Builder{}
	agent.Stdout, agent.Stderr = log, log
	if err := agent.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = agent.Process.Signal(syscall.SIGTERM)
		stopped := time.AfterFunc(agentExitBound, func() { _ = agent.Process.Kill() })
		defer stopped.Stop()
		if err := agent.Wait(); err != nil {
			t.Errorf("agent %s after SIGTERM: %v\n%s", name, err, log.String())
		}
	})
	return log
}
