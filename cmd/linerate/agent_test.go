package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/linerate/linerate/internal/mtls"
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
	} {
		code, _, errOut := linerate(t, append([]string{"agent"}, tc.args...)...)
		if code != 2 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stderr %q (want 2 and %q)", tc.args, code, errOut, tc.want)
		}
	}
}

// TestAgentRunsUntilSignal: an insecure agent warns, restores a journal a
// crashed run left, serves, and on the signal context shuts down cleanly.
func TestAgentRunsUntilSignal(t *testing.T) {
	root, state := host(t), t.TempDir()
	sum := treeSum(t, root)
	if code, _, errOut := linerate(t, "irq", "apply", "--iface", "eth0", "--root", root, "--state-dir", state); code != 0 {
		t.Fatalf("apply: %s", errOut)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"agent", "--role", "receiver", "--iface", "eth0", "--root", root, "--state-dir", state,
			"--insecure", "--grpc", "127.0.0.1:0", "--bind", "127.0.0.1:0", "--name", "t1"}, &stdout, &stderr)
	}()
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(stderr.String(), "gossip started") {
		if time.Now().After(deadline) {
			t.Fatalf("agent did not start:\n%s", stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if treeSum(t, root) != sum {
		t.Error("the crashed run's journal was not restored at start")
	}
	if !strings.Contains(stderr.String(), mtls.InsecureWarning) {
		t.Errorf("no insecure warning:\n%s", stderr.String())
	}
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("exit %d:\n%s", code, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("agent did not stop on the signal")
	}
}
