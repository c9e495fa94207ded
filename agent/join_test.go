package agent

import (
	"bytes"
	"context"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
)

// freeGossipAddr is a loopback address:port free for both TCP and UDP now
// (memberlist binds both), for a seed that comes up later.
func freeGossipAddr(t *testing.T) string {
	t.Helper()
	for range 20 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		u, err := net.ListenPacket("udp", addr)
		_ = l.Close()
		if err == nil {
			_ = u.Close()
			return addr
		}
	}
	t.Fatal("no free loopback port for TCP and UDP")
	return ""
}

// logBuffer collects an agent's log lines for assertions.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) count(s string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Count(l.b.String(), s)
}

// noMoreAttempts fails when a failed join attempt is logged within d
// (after what ended them).
func (l *logBuffer) noMoreAttempts(t *testing.T, d time.Duration, after string) {
	t.Helper()
	n := l.count("no seed answered")
	time.Sleep(d)
	if m := l.count("no seed answered"); m != n {
		t.Errorf("join attempts went on after %s: %d then %d", after, n, m)
	}
}

func bufLog(l *logBuffer) hclog.Logger {
	return hclog.New(&hclog.LoggerOptions{Level: hclog.Info, Output: l})
}

// An agent whose seed is not up yet starts anyway, warns at every failed
// attempt, and joins once the seed appears.
func TestJoinRetriesUntilSeedComesUp(t *testing.T) {
	certs := testCerts(t)
	seedAddr := freeGossipAddr(t)
	var logs logBuffer
	b := startAgent(t, Config{Name: "late", Role: RoleReceiver, Iface: "lo", Bind: "127.0.0.1:0", Join: []string{seedAddr},
		JoinRetry: 50 * time.Millisecond, JoinRetryMax: 200 * time.Millisecond, Logger: bufLog(&logs), serfHook: fastSerf}, certs)
	poll(t, 3*time.Second, "two failed join attempts logged", func() bool { return logs.count("[WARN]  join the cluster: no seed answered") >= 2 })
	if b.GRPCAddr() == "" {
		t.Fatal("the agent stopped serving while its seed was down")
	}
	a := startAgent(t, Config{Name: "seed", Role: RoleBoth, Iface: "lo", Bind: seedAddr, AllowMgmtIface: true, serfHook: fastSerf}, certs)
	poll(t, 5*time.Second, "the late seed sees the agent", func() (ok bool) { _, ok = member(a, "late"); return ok })
	poll(t, 3*time.Second, "the agent sees the seed", func() (ok bool) { _, ok = member(b, "seed"); return ok })
	// The members know each other before the join that did it returns.
	poll(t, 3*time.Second, "the join logged", func() bool { return logs.count("joined the cluster") > 0 })
	if logs.count("joined the cluster") != 1 {
		t.Errorf("want one join logged, log:\n%s", logs.b.String())
	}
	logs.noMoreAttempts(t, 500*time.Millisecond, "joining")
}

// A seed that never comes up: the agent keeps serving and keeps trying,
// the wait between attempts growing to its bound, until it shuts down.
func TestJoinDeadSeedAgentStaysUp(t *testing.T) {
	certs := testCerts(t)
	var logs logBuffer
	b := startAgent(t, Config{Name: "alone", Role: RoleReceiver, Iface: "lo", Bind: "127.0.0.1:0", Join: []string{freeGossipAddr(t)},
		JoinRetry: 20 * time.Millisecond, JoinRetryMax: 80 * time.Millisecond, Logger: bufLog(&logs), serfHook: fastSerf}, certs)
	poll(t, 5*time.Second, "several failed join attempts", func() bool { return logs.count("no seed answered") >= 5 })
	if b.GRPCAddr() == "" || b.GossipAddr() == "" {
		t.Fatal("the agent stopped while its seed was dead")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := b.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	logs.noMoreAttempts(t, 300*time.Millisecond, "shutdown")
}

// Several seeds, one dead: the agent joins through the live one at once.
func TestJoinSeveralSeedsOneDead(t *testing.T) {
	certs := testCerts(t)
	a := startAgent(t, Config{Name: "seed", Role: RoleBoth, Iface: "lo", Bind: "127.0.0.1:0", AllowMgmtIface: true, serfHook: fastSerf}, certs)
	var logs logBuffer
	b := startAgent(t, Config{Name: "b", Role: RoleReceiver, Iface: "lo", Bind: "127.0.0.1:0", Join: []string{freeGossipAddr(t), a.GossipAddr()},
		Logger: bufLog(&logs), serfHook: fastSerf}, certs)
	if _, ok := member(b, "seed"); !ok {
		t.Fatalf("b does not see the live seed after Start; log:\n%s", logs.b.String())
	}
	if logs.count("seed did not answer") > 1 || logs.count("no seed answered") != 0 || logs.count("joined the cluster: seed="+a.GossipAddr()) != 1 {
		t.Errorf("want a join through the live seed, at most one warning for the dead one; log:\n%s", logs.b.String())
	}
}
