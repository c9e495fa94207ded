//go:build linux

package lab

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The lab's agents, netns and VM hosts alike (both start from
// agentSettings), allow every fix class: an agent allows none unless its
// operator opts in, and the lab's hosts are the lab's own. Their file
// holds it, and the seeds to join as a list.
func TestAgentSettingsFile(t *testing.T) {
	h := &Host{Name: "r1"}
	settings := agentSettings(h, "receiver", 1, &Cluster{Join: []string{"10.0.0.1:7946", "10.0.0.2:7946"}}, "key", "tls", "state", "info")
	file := filepath.Join(t.TempDir(), "r1", "agent.yaml")
	if err := writeAgentConfig(file, h, append(settings, Spec{VLAN: 100}.vlanSettings()...)); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"# linerate lab: the agent of host r1\n", "\nname: r1\n", "\nrole: receiver\n", "\nallow-fixes: all\n", "\njoin: ['10.0.0.1:7946']\n", "\nallow-vlan: [\"100\"]\n", "\ntls-dir: tls\n"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("agent.yaml:\n%s\nwant %q", b, want)
		}
	}
}
