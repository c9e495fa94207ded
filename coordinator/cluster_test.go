package coordinator

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/hashicorp/serf/serf"

	"github.com/linerate/linerate/internal/cluster/gossip"
)

// A member reads its tags through gossip.DecodeTags, and its JSON
// (`linerate members --json`) keeps the role a string.
func TestMemberOf(t *testing.T) {
	tags, err := gossip.Tags{Role: gossip.RoleBoth, GRPC: "10.0.0.1:7947", Iface: "eth1", NUMA: 1, Queues: 8, SpeedMbps: 25000,
		Backends: []string{"kernel", "xdp"}, Version: "v1"}.Encode()
	if err != nil {
		t.Fatal(err)
	}
	m := memberOf(serf.Member{Name: "a1", Addr: net.ParseIP("10.0.0.1"), Port: 7946, Tags: tags, Status: serf.StatusAlive})
	b, _ := json.Marshal(m)
	want := `{"name":"a1","role":"both","status":"alive","gossip":"10.0.0.1:7946","grpc":"10.0.0.1:7947","iface":"eth1","numa_node":1,"queues":8,"link_speed_mbps":25000,"backends":"kernel,xdp","version":"v1"}`
	if string(b) != want {
		t.Errorf("member JSON\n %s\nwant\n %s", b, want)
	}
	if !m.Sends() || !m.Receives() {
		t.Errorf("role both: sends %t receives %t", m.Sends(), m.Receives())
	}
	sel := m.Tags.Selectable()
	if sel["role"] != "both" || sel["numa"] != "1" || sel["backend"] != "kernel,xdp" || sel["speed"] != "25000" {
		t.Errorf("selectable tags %v", sel)
	}
}

// `linerate members --json` is a contract: testdata/members-743d6ca.json
// is what the code at 743d6ca printed for a member with every field set
// and one with every field zero; it reads back into Members (the
// backends a list again) and prints again byte for byte.
func TestMembersJSONUnchanged(t *testing.T) {
	want, err := os.ReadFile("testdata/members-743d6ca.json")
	if err != nil {
		t.Fatal(err)
	}
	var ms []Member
	if err := json.Unmarshal(want, &ms); err != nil {
		t.Fatal(err)
	}
	if len(ms) != 2 || !slices.Equal(ms[0].Backends, []string{"kernel", "xdp"}) || ms[0].Health == "" || ms[1].Backends != nil {
		t.Errorf("members read back: %+v", ms)
	}
	var got bytes.Buffer
	enc := json.NewEncoder(&got) // as the command prints them
	enc.SetIndent("", "  ")
	if err := enc.Encode(ms); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Errorf("members JSON\n%s\nwant (743d6ca)\n%s", got.Bytes(), want)
	}
}

// WaitAlive returns at its deadline while its background refresh still
// waits on a seed that accepts and never answers; Close returns only
// after that refresh has ended (here: when the seed hangs up), so nothing
// of the cluster runs after it.
func TestCloseWaitsForRefresh(t *testing.T) {
	agent := gossipAgent(t, "agent-close-test", gossip.RoleBoth)
	// A leave that takes no time: Close's own work is over at once.
	quick := func(sc *serf.Config) { sc.LeavePropagateDelay, sc.BroadcastTimeout = 0, 100*time.Millisecond }
	c, err := JoinCluster(context.Background(), ClusterConfig{Name: "coordinator-close-test", Bind: "127.0.0.1:0", Join: []string{agent.Addr()}, InsecureGossip: true, Tune: quick})
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	defer func() {
		if !closed {
			c.Close()
		}
	}()
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	conns := make(chan net.Conn, 4)
	go func() {
		for {
			conn, err := silent.Accept()
			if err != nil {
				return
			}
			conns <- conn
		}
	}()
	c.join = []string{silent.Addr().String()} // the refresh's seed
	if _, err := c.WaitAlive(context.Background(), 2, 900*time.Millisecond); err == nil {
		t.Fatal("two agents alive of one")
	}
	var conn net.Conn
	select {
	case conn = <-conns:
	case <-time.After(5 * time.Second):
		t.Fatal("no refresh reached the seed")
	}
	done := make(chan error, 1)
	go func() { done <- c.Close() }()
	select {
	case <-done:
		t.Fatal("Close returned while its refresh was still waiting on the seed")
	case <-time.After(time.Second):
	}
	conn.Close() // the seed hangs up: the refresh ends
	select {
	case <-done:
		closed = true
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not return after its refresh ended")
	}
	if _, err := c.WaitAlive(context.Background(), 2, time.Second); err == nil {
		t.Error("WaitAlive after Close: no error")
	}
}

// WaitNamed returns once every agent named is alive, and at its deadline
// names those that are not.
func TestWaitNamed(t *testing.T) {
	agent := gossipAgent(t, "a1", gossip.RoleReceiver)
	c, err := JoinCluster(context.Background(), ClusterConfig{Bind: "127.0.0.1:0", Join: []string{agent.Addr()}, InsecureGossip: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if ms, err := c.WaitNamed(context.Background(), []string{"a1", "a1"}, 5*time.Second); err != nil || len(ms) != 1 {
		t.Errorf("WaitNamed(a1) = %v, %v", ms, err)
	}
	t0 := time.Now()
	_, err = c.WaitNamed(context.Background(), []string{"a1", "b2", "c3"}, 300*time.Millisecond)
	if err == nil || err.Error() != "not alive: b2, c3 after 300ms" {
		t.Errorf("WaitNamed(a1, b2, c3) = %v, want b2 and c3 named", err)
	}
	if d := time.Since(t0); d < 300*time.Millisecond || d > 3*time.Second {
		t.Errorf("gave up after %s, want 300ms", d)
	}
}

// gossipAgent is a serf member on loopback that announces an agent of
// role, in plaintext, until the test ends.
func gossipAgent(t *testing.T, name string, role gossip.Role) *gossip.Member {
	t.Helper()
	tags, err := gossip.Tags{Role: role}.Encode()
	if err != nil {
		t.Fatal(err)
	}
	m, err := gossip.Start(gossip.Config{Name: name, Tags: tags, Bind: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Stop() })
	return m
}
