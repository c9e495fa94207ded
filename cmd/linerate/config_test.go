package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/linerate/linerate/internal/config"
)

func writeConfig(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "agent.yaml")
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// The agent's file gives every flag, the required ones too; the command
// line wins; --print-config prints what the agent would run with, and
// that output is a file the agent loads to the same configuration.
func TestAgentPrintConfig(t *testing.T) {
	p := writeConfig(t, `role: receiver
iface: data0
tls-dir: /etc/linerate/tls
join: [198.18.0.1:7946, 198.18.0.2:7946]
allow-vlan: 100
receiver-memory: 512MiB
max-run: 1h
log-level: debug
`)
	code, out, errOut := linerate(t, "agent", "--config", p, "--iface", "data1", "--print-config")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		"role: receiver # " + p + "\n",
		"iface: data1 # command line\n",
		"join: ['198.18.0.1:7946', '198.18.0.2:7946'] # " + p + "\n",
		"allow-vlan: [\"100\"] # " + p + "\n",
		"receiver-memory: 512MiB # " + p + "\n",
		"max-run: 1h0m0s # " + p + "\n",
		"log-level: debug # " + p + "\n",
		"bind: :7946 # default\n",
		"insecure: false # default\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("printed:\n%s\nwant a line %q", out, want)
		}
	}
	if strings.Contains(out, "config:") || strings.Contains(out, "print-config:") || strings.Contains(out, "help:") {
		t.Errorf("printed the file's own flags:\n%s", out)
	}
	// Loaded again, it prints the same values.
	again := writeConfig(t, out)
	code, out2, errOut := linerate(t, "agent", "--config", again, "--print-config")
	if code != 0 {
		t.Fatalf("the printed configuration does not load: exit %d: %s", code, errOut)
	}
	if strip(out2) != strip(out) {
		t.Errorf("printed again:\n%s\nwant the values of:\n%s", out2, out)
	}
}

// strip drops the comments (the sources) of a printed configuration.
func strip(s string) string {
	var b strings.Builder
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, "#") {
			continue
		}
		if i := strings.Index(l, " # "); i >= 0 {
			l = l[:i]
		}
		b.WriteString(l + "\n")
	}
	return b.String()
}

func TestAgentConfigRefused(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nope.yaml")
	for _, tc := range []struct {
		name, text string
		args       []string
		want       string
	}{
		{"unknown key", "role: sender\niface: d0\ntlsdir: /x\n", nil, ":3: tlsdir: unknown key: valid keys are the flags advertise, allow-ca-key"},
		{"bad value, the flag's own check", "role: sender\n\nreceiver-memory: 12 parsecs\n", nil, `:3: receiver-memory: "12 parsecs": want a whole number of bytes`},
		{"bad duration", "max-run: soon\n", nil, `:1: max-run: "soon": time: invalid duration`},
		{"list for one value", "iface: [a, b]\n", nil, ":1: iface: takes one string value, not a list"},
		{"required flags missing", "tls-dir: /x\n", nil, `required flag(s) "iface", "role" not set: give them on the command line or in `},
		{"bad log level from the file", "role: sender\niface: d0\nlog-level: loud\n", nil, `--log-level "loud": valid levels are`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := writeConfig(t, tc.text)
			code, _, errOut := linerate(t, append([]string{"agent", "--config", p}, tc.args...)...)
			if code != 2 || !strings.Contains(errOut, tc.want) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, errOut, tc.want)
			}
			if strings.Contains(tc.want, ":") && strings.HasPrefix(tc.want, ":") && !strings.Contains(errOut, p+tc.want) {
				t.Errorf("stderr %q does not name %s", errOut, p)
			}
		})
	}
	// A --config that is not there is an error (only the default file may
	// be absent).
	code, _, errOut := linerate(t, "agent", "--config", missing, "--role", "sender", "--iface", "d0", "--insecure")
	if code != 2 || !strings.Contains(errOut, "--config: open "+missing+": no such file or directory") {
		t.Errorf("absent --config: exit %d, stderr %q", code, errOut)
	}
}

// The coordinator's commands read the cluster flags from their file, and
// only those.
func TestCoordinatorConfig(t *testing.T) {
	p := writeConfig(t, "join: [198.18.0.1:7946]\ntls-dir: /etc/linerate/tls\ncert-name: coord-1\njoin-timeout: 5s\n")
	for _, cmd := range [][]string{{"members"}, {"run"}, {"campaign", "resume", "ID"}} {
		code, out, errOut := linerate(t, append(cmd, "--config", p, "--print-config")...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", cmd, code, errOut)
		}
		for _, want := range []string{"join: ['198.18.0.1:7946'] # " + p, "cert-name: coord-1 # " + p, "join-timeout: 5s # " + p, "insecure: false # default"} {
			if !strings.Contains(out, want) {
				t.Errorf("%v printed:\n%s\nwant %q", cmd, out, want)
			}
		}
		if strings.Contains(out, "senders:") || strings.Contains(out, "json:") || strings.Contains(out, "log-level:") {
			t.Errorf("%v printed more than the cluster flags:\n%s", cmd, out)
		}
	}
	bad := writeConfig(t, "join: [198.18.0.1:7946]\nsenders: [s1]\n")
	code, _, errOut := linerate(t, "run", "--config", bad, "--senders", "s1", "--receivers", "r1", "--duration", "1s")
	if code != 2 || !strings.Contains(errOut, bad+":2: senders: unknown key: valid keys are the flags advertise, allow-ca-key, bind, cert-name, gossip-key, insecure, insecure-gossip, join, join-timeout, tls-dir") {
		t.Errorf("run with a non-cluster key: exit %d, stderr %q", code, errOut)
	}
}

// The cluster flags a coordinator file may hold are exactly the ones
// register adds.
func TestClusterConfigKeys(t *testing.T) {
	var f clusterFlags
	fl := pflag.NewFlagSet("x", pflag.ContinueOnError)
	f.flags(fl)
	if got := strings.Join(config.Keys(fl, nil), ","); got != "advertise,allow-ca-key,bind,cert-name,gossip-key,insecure,insecure-gossip,join,join-timeout,tls-dir" {
		t.Errorf("cluster keys %s", got)
	}
}
