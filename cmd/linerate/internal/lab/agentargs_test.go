//go:build linux

package lab

import (
	"slices"
	"testing"
)

// The lab's agents, netns and VM hosts alike (both start from
// agentArgs), allow every fix class: an agent allows none unless its
// operator opts in, and the lab's hosts are the lab's own.
func TestAgentArgsAllowFixes(t *testing.T) {
	args := agentArgs(&Host{Name: "r1"}, "receiver", 1, &Cluster{Join: []string{"10.0.0.1:7946", "10.0.0.2:7946"}}, "key", "tls", "state", "info")
	i := slices.Index(args, "--allow-fixes")
	if i < 0 || i+1 >= len(args) || args[i+1] != "all" {
		t.Errorf("agent args %q: want --allow-fixes all", args)
	}
}
