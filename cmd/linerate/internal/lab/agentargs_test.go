//go:build linux

package lab

import (
	"slices"
	"strings"
	"testing"

	"github.com/linerate/linerate/doctor"
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

// A VM host's agent accepts as known exactly the two WARNs every lab
// guest has on purpose, link (no line speed on the switch bridge) and
// clock (no time daemon), each a valid --known-check with its reason; a
// netns host's agent (agentArgs alone) accepts none.
func TestVMKnownChecks(t *testing.T) {
	args := vmKnownChecks()
	var ids []string
	for i := 0; i < len(args); i += 2 {
		if args[i] != "--known-check" || i+1 >= len(args) {
			t.Fatalf("args %q: want --known-check CHECK=WHY pairs", args)
		}
		k, err := doctor.ParseKnownCheck(args[i+1])
		if err != nil {
			t.Errorf("%q: %v", args[i+1], err)
		}
		if !strings.HasPrefix(k.Why, "a lab guest") {
			t.Errorf("%s: why %q: want it to say it is the lab guest's", k.ID, k.Why)
		}
		ids = append(ids, k.ID)
	}
	if !slices.Equal(ids, []string{"link", "clock"}) {
		t.Errorf("known checks %q, want link and clock only", ids)
	}
	if slices.Contains(agentArgs(&Host{Name: "r1"}, "receiver", 0, &Cluster{}, "key", "tls", "state", "info"), "--known-check") {
		t.Error("agentArgs accepts checks as known: only a VM host's agent may")
	}
}
