//go:build linux

package lab

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/linerate/linerate/doctor"
	"github.com/linerate/linerate/internal/cluster/gossip"
	"github.com/linerate/linerate/internal/cluster/mtls"
	"github.com/linerate/linerate/internal/config"
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

// A VM host's guest gets its bundle as /etc/linerate: the files `certs
// issue --bundle` writes, never ca.key, and an agent.yaml holding the
// bundle's settings and the host's own added, each key once.
func TestGuestBundle(t *testing.T) {
	dir := t.TempDir()
	c := &Cluster{TLSDir: filepath.Join(dir, "certs"), Join: []string{"198.19.0.1:7946", "198.19.0.2:7946"}}
	if _, _, err := mtls.Init(c.TLSDir, mtls.CAOptions{CommonName: "lab CA"}, false); err != nil {
		t.Fatal(err)
	}
	if _, _, err := mtls.Issue(c.TLSDir, mtls.LeafOptions{Name: "r1", Role: mtls.RoleAgent}, false); err != nil {
		t.Fatal(err)
	}
	if _, err := gossip.InitKey(c.TLSDir, false); err != nil {
		t.Fatal(err)
	}
	l := &Lab{Spec: Spec{Name: "t", VLAN: 100}}
	files, err := l.guestBundle(&Host{Name: "r1", Role: "receiver"}, 1, AgentOptions{Dir: dir, LogLevel: "debug"}, c)
	if err != nil {
		t.Fatal(err)
	}
	var guest []string
	for g := range files {
		guest = append(guest, g)
	}
	slices.Sort(guest)
	if want := []string{"/etc/linerate/agent.yaml", "/etc/linerate/tls/ca.crt", "/etc/linerate/tls/gossip.key", "/etc/linerate/tls/r1.crt", "/etc/linerate/tls/r1.key"}; !slices.Equal(guest, want) {
		t.Errorf("guest files %q, want %q", guest, want)
	}
	b, err := os.ReadFile(files["/etc/linerate/agent.yaml"])
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	for _, want := range []string{"from 'linerate certs issue --bundle'", "\nname: r1\n", "\ntls-dir: /etc/linerate/tls\n", "\njoin: ['198.19.0.1:7946']\n",
		"# added by linerate lab", "\nrole: receiver\n", "\niface: data0\n", "\nstate-dir: /var/lib/linerate/state\n", "\nlog-level: debug\n", "\nallow-vlan: [\"100\"]\n"} {
		if !strings.Contains(text, want) {
			t.Errorf("agent.yaml:\n%s\nwant %q", text, want)
		}
	}
	keys := map[string]int{}
	for _, line := range strings.Split(text, "\n") {
		if k, _, ok := strings.Cut(line, ":"); ok && !strings.HasPrefix(line, "#") && !strings.HasPrefix(line, " ") {
			keys[k]++
		}
	}
	for k, n := range keys {
		if n != 1 {
			t.Errorf("agent.yaml holds %s %d times:\n%s", k, n, text)
		}
	}
}

// A VM host's agent accepts as known exactly the two WARNs every lab
// guest has on purpose, link (no line speed on the switch bridge) and
// clock (no time daemon), each a valid --known-check with its reason; a
// netns host's agent (agentArgs alone) accepts none.
func TestVMKnownChecks(t *testing.T) {
	var ids []string
	for _, v := range vmKnownChecks().Values {
		k, err := doctor.ParseKnownCheck(v)
		if err != nil {
			t.Errorf("%q: %v", v, err)
		}
		if !strings.HasPrefix(k.Why, "a lab guest") {
			t.Errorf("%s: why %q: want it to say it is the lab guest's", k.ID, k.Why)
		}
		ids = append(ids, k.ID)
	}
	if !slices.Equal(ids, []string{"link", "clock"}) {
		t.Errorf("known checks %q, want link and clock only", ids)
	}
	for _, s := range agentSettings(&Host{Name: "r1"}, "receiver", 0, &Cluster{}, "key", "tls", "state", "info") {
		if s.Key == "known-check" {
			t.Errorf("agentSettings accepts checks as known (%q): only a VM host's agent may", s.Values)
		}
	}
}

// A VM host's agent runs with no flag: its known checks are its
// agent.yaml's known-check list, and they load back whole (each WHY, its
// apostrophes, colons and parentheses) through a flag of the agent's kind.
func TestVMKnownSettingsLoad(t *testing.T) {
	var b bytes.Buffer
	if err := config.Encode(&b, "test", []config.Setting{vmKnownChecks()}); err != nil {
		t.Fatal(err)
	}
	fs := pflag.NewFlagSet("agent", pflag.ContinueOnError)
	got := fs.StringArray("known-check", nil, "")
	if _, err := config.Load(fs, []string{"known-check"}, "agent.yaml", b.Bytes()); err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	if want := vmKnownChecks().Values; !slices.Equal(*got, want) {
		t.Errorf("known-check from\n%s\n= %q, want %q", b.String(), *got, want)
	}
}
