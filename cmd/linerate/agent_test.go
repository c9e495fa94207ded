package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/linerate/linerate/internal/cluster/gossip"
	"github.com/linerate/linerate/internal/cluster/mtls"
)

// syncBuffer is a bytes.Buffer safe for a writer and a poller.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestAgentBadInput(t *testing.T) {
	dir := t.TempDir()
	shortKey := filepath.Join(dir, "short.key")
	notB64 := filepath.Join(dir, "bad.key")
	if err := os.WriteFile(shortKey, []byte(base64.StdEncoding.EncodeToString([]byte("short"))), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(notB64, []byte("!!!"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--role", "sender", "--iface", "lo"}, "--tls-dir"},
		{[]string{"--role", "sender", "--iface", "lo", "--insecure", "--tls-dir", dir}, "exactly one"},
		{[]string{"--role", "boss", "--iface", "lo", "--insecure"}, "valid roles"},
		{[]string{"--role", "sender", "--iface", "lo", "--insecure", "--gossip-key", notB64}, "base64"},
		{[]string{"--role", "sender", "--iface", "lo", "--insecure", "--gossip-key", shortKey}, "16, 24 or 32"},
		{[]string{"--iface", "lo", "--insecure"}, "role"},
		{[]string{"--role", "receiver", "--iface", "lo", "--insecure", "--receiver-memory", "lots"}, `invalid argument "lots" for "--receiver-memory" flag: want a whole number of bytes, KiB, MiB, GiB or TiB`},
		{[]string{"--role", "receiver", "--iface", "lo", "--insecure", "--receiver-memory", "0MiB"}, "want at least 1 byte"},
		{[]string{"--role", "sender", "--iface", "lo", "--insecure", "--allow-dst", "198.18.0.0/33"}, `--allow-dst: "198.18.0.0/33": want a CIDR`},
		// --known-check: a check of doctor's, and why its WARN is known.
		{[]string{"--role", "sender", "--iface", "lo", "--insecure", "--known-check", "clocks=no daemon"}, `--known-check "clocks": no such check: valid checks are irqbalance, steering,`},
		{[]string{"--role", "sender", "--iface", "lo", "--insecure", "--known-check", "clock"}, `--known-check "clock": want CHECK=WHY`},
		{[]string{"--role", "sender", "--iface", "lo", "--insecure", "--known-check", "link="}, "--known-check link: no reason: say why its WARN is known on this host"},
		// lo holds the gRPC address: a sender may not send from it.
		{[]string{"--role", "sender", "--iface", "lo", "--insecure", "--grpc", "127.0.0.1:0", "--bind", ""},
			"--iface lo carries the gRPC address (--grpc) 127.0.0.1"},
		{[]string{"--role", "both", "--iface", "lo", "--insecure", "--insecure-gossip", "--grpc", "127.0.0.1:0", "--bind", "127.0.0.1:0"}, "--allow-mgmt-iface to send from it anyway"},
	} {
		code, _, errOut := linerate(t, append([]string{"agent"}, tc.args...)...)
		if code != 2 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stderr %q (want 2 and %q)", tc.args, code, errOut, tc.want)
		}
	}
}

// startAgent runs `linerate agent args...` until the returned stop,
// which cancels its signal context and returns the exit code; it returns
// once the agent logged until.
func startAgent(t *testing.T, until string, args ...string) (stderr *syncBuffer, stop func() int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var stdout syncBuffer
	stderr = &syncBuffer{}
	done := make(chan int, 1)
	// As main does: SIGHUP is routed to the command that claims it.
	hctx, stopHangup := withHangup(ctx)
	go func() { done <- run(hctx, append([]string{"agent"}, args...), &stdout, stderr) }()
	stop = func() int {
		cancel()
		defer stopHangup()
		select {
		case code := <-done:
			return code
		case <-time.After(10 * time.Second):
			t.Fatal("agent did not stop on the signal")
			return -1
		}
	}
	t.Cleanup(func() { cancel(); stopHangup() })
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(stderr.String(), until) {
		if time.Now().After(deadline) {
			stop()
			t.Fatalf("agent did not start:\n%s", stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	return stderr, stop
}

// TestAgentRunsUntilSignal checks that an insecure agent leaves an
// operator's `irq apply` alone, restores a journal a crashed run of its
// own left, serves gRPC and metrics, and on the signal context shuts down
// cleanly.
func TestAgentRunsUntilSignal(t *testing.T) {
	root, state := host(t), t.TempDir()
	sum := treeSum(t, root)
	if code, _, errOut := linerate(t, "irq", "apply", "--iface", "eth0", "--root", root, "--state-dir", state); code != 0 {
		t.Fatalf("apply: %s", errOut)
	}
	applied := treeSum(t, root)
	args := []string{"--role", "receiver", "--iface", "eth0", "--root", root, "--state-dir", state,
		"--insecure", "--insecure-gossip", "--grpc", "127.0.0.1:0", "--bind", "127.0.0.1:0", "--name", "t1", "--metrics", "127.0.0.1:0"}
	stderr, stop := startAgent(t, "gossip started", args...)
	if treeSum(t, root) != applied || !strings.Contains(stderr.String(), `tuning journal not this agent's: left alone`) ||
		!strings.Contains(stderr.String(), `owner="irq apply"`) {
		t.Errorf("the operator's irq apply was not left alone:\n%s", stderr.String())
	}
	if code := stop(); code != 0 {
		t.Errorf("exit %d:\n%s", code, stderr.String())
	}
	// The same journal as the agent's own crashed run leaves it.
	journal := filepath.Join(state, "irq-eth0.json")
	b, err := os.ReadFile(journal)
	if err != nil || !bytes.Contains(b, []byte(`"owner": "irq apply"`)) {
		t.Fatalf("the journal of irq apply (%v):\n%s", err, b)
	}
	if err := os.WriteFile(journal, bytes.Replace(b, []byte(`"irq apply"`), []byte(`"agent:t1:eth0"`), 1), 0o600); err != nil {
		t.Fatal(err)
	}
	stderr, stop = startAgent(t, "gossip started", args...)
	if treeSum(t, root) != sum {
		t.Errorf("the crashed run's journal was not restored at start:\n%s", stderr.String())
	}
	if !strings.Contains(stderr.String(), mtls.InsecureWarning) {
		t.Errorf("no insecure warning:\n%s", stderr.String())
	}
	if !strings.Contains(stderr.String(), gossip.InsecureWarning) {
		t.Errorf("no insecure-gossip warning:\n%s", stderr.String())
	}
	url := regexp.MustCompile(`serving metrics: url=(\S+)`).FindStringSubmatch(stderr.String())
	if url == nil {
		t.Fatalf("no metrics URL logged:\n%s", stderr.String())
	}
	resp, err := http.Get(url[1])
	if err != nil {
		t.Fatal(err)
	}
	b, err = io.ReadAll(resp.Body)
	resp.Body.Close()
	if want := `linerate_agent_info{backend="",iface="eth0",role="receiver",version="` + version + `"} 1`; err != nil || !strings.Contains(string(b), want) {
		t.Errorf("metrics (%v): no %s in\n%s", err, want, b)
	}
	if code := stop(); code != 0 {
		t.Errorf("exit %d:\n%s", code, stderr.String())
	}
}

// TestAgentAllowMgmtIface checks that a sender on the interface of its gRPC
// address starts when allowed.
func TestAgentAllowMgmtIface(t *testing.T) {
	stderr, stop := startAgent(t, "serving the Agent service", "--role", "sender", "--iface", "lo", "--state-dir", t.TempDir(),
		"--insecure", "--grpc", "127.0.0.1:0", "--bind", "", "--name", "t1", "--allow-mgmt-iface", "--allow-dst", "198.18.0.0/15")
	if code := stop(); code != 0 {
		t.Errorf("exit %d:\n%s", code, stderr.String())
	}
}

// An agent whose seed is down keeps running and retrying (the CLI's
// defaults: the second attempt a second after the first), and stops
// cleanly on the signal: it never exits for a failed join.
func TestAgentJoinFailureKeepsRunning(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := l.Addr().String()
	_ = l.Close()
	stderr, stop := startAgent(t, "no seed answered", "--role", "receiver", "--iface", "eth0", "--root", host(t), "--state-dir", t.TempDir(),
		"--insecure", "--insecure-gossip", "--grpc", "127.0.0.1:0", "--bind", "127.0.0.1:0", "--name", "t1", "--join", dead)
	deadline := time.Now().Add(5 * time.Second)
	for strings.Count(stderr.String(), "no seed answered") < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("no second join attempt within 5 s:\n%s", stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !strings.Contains(stderr.String(), "seed="+dead) {
		t.Errorf("the warning does not name the seed %s:\n%s", dead, stderr.String())
	}
	if code := stop(); code != 0 {
		t.Errorf("exit %d after the signal, want 0:\n%s", code, stderr.String())
	}
}

// An --allow-dst covering everything is taken with --allow-dst-any, and
// warned at start.
func TestAgentAllowDstAnyWarns(t *testing.T) {
	stderr, stop := startAgent(t, "serving the Agent service", "--role", "sender", "--iface", "lo", "--insecure", "--grpc", "127.0.0.1:0",
		"--bind", "", "--allow-mgmt-iface", "--state-dir", t.TempDir(), "--allow-dst", "0.0.0.0/0", "--allow-dst-any", "--allow-vlan", "100-102,200")
	if !strings.Contains(stderr.String(), "--allow-dst-any: a sender of this agent may send to every host") || !strings.Contains(stderr.String(), "prefixes=0.0.0.0/0") {
		t.Errorf("no --allow-dst-any warning:\n%s", stderr.String())
	}
	if code := stop(); code != 0 {
		t.Errorf("exit %d:\n%s", code, stderr.String())
	}
}
