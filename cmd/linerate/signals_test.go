package main

import (
	"os"
	"slices"
	"syscall"
	"testing"
)

// SIGHUP ends every command through its context but the agent's, which
// reloads its certificates on it.
func TestShutdownSignals(t *testing.T) {
	for _, tc := range []struct {
		args   []string
		hangup bool
	}{
		{[]string{"agent", "--role", "sender"}, false},
		{[]string{"--log-level", "debug", "agent"}, false},
		{[]string{"--log-format=json", "agent"}, false},
		{[]string{"lab", "run"}, true},
		{[]string{"--log-level", "agent", "run"}, true}, // "agent" is the flag's value here
		{[]string{"run", "agent"}, true},
		{nil, true},
	} {
		got := slices.Contains(shutdownSignals(tc.args), os.Signal(syscall.SIGHUP))
		if got != tc.hangup {
			t.Errorf("%v: SIGHUP ends the command: %v, want %v", tc.args, got, tc.hangup)
		}
		if !slices.Contains(shutdownSignals(tc.args), os.Signal(syscall.SIGTERM)) {
			t.Errorf("%v: SIGTERM does not end the command", tc.args)
		}
	}
}
