//go:build linux && traffic

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/linerate/linerate/cmd/linerate/internal/lab"
	"github.com/linerate/linerate/coordinator"
	"github.com/linerate/linerate/internal/cluster/gossip"
	"github.com/linerate/linerate/internal/cluster/mtls"
	"github.com/linerate/linerate/internal/netns/nstest"
	lineratev1 "github.com/linerate/linerate/proto/linerate/v1"
)

// TestCoordinatorBeforeAgents starts coordinators before their agents
// (real processes, with certificates from one `linerate certs init` and
// its gossip key): `members` on loopback (membersBeforeAgents), `run` on
// a netns lab (runBeforeAgents).
func TestCoordinatorBeforeAgents(t *testing.T) {
	bin := Binary(t)
	tls := t.TempDir()
	for _, args := range [][]string{
		{"certs", "init", "--dir", tls},
		{"certs", "issue", "--dir", tls, "--name", "a1", "--role", "agent", "--host", "127.0.0.1"},
		{"certs", "issue", "--dir", tls, "--name", "a2", "--role", "agent", "--host", "127.0.0.1"},
		{"certs", "issue", "--dir", tls, "--name", "coordinator", "--role", "coordinator"},
	} {
		linerateOK(t, bin, args...)
	}
	t.Run("members", func(t *testing.T) { membersBeforeAgents(t, bin, tls) })
	t.Run("run", func(t *testing.T) { runBeforeAgents(t, bin, tls) })
}

// linerateOK runs the binary and fails t unless it succeeds.
func linerateOK(t *testing.T, bin string, args ...string) {
	t.Helper()
	if out, err := exec.Command(bin, args...).CombinedOutput(); err != nil {
		t.Fatalf("%v: %v\n%s", args, err, out)
	}
}

// membersBeforeAgents starts `linerate members --wait 2` first and its
// two agents on loopback 2.5 s later: the coordinator's join retries
// until its seed is up, so the command lists both agents, serving. A
// coordinator whose seed never comes up gives up at its --join-timeout
// with the seed, the time it tried and the last error.
func membersBeforeAgents(t *testing.T, bin, tls string) {
	// Addresses of loopback's /8 of this process's own, on gossip's
	// default port: nothing else listens there.
	pid := syscall.Getpid()
	seed := fmt.Sprintf("127.%d.%d.1:7946", pid>>8&255, pid&255)
	dead := fmt.Sprintf("127.%d.%d.2:7946", pid>>8&255, pid&255)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	t0 := time.Now()
	members := exec.CommandContext(ctx, bin, "members", "--json", "--wait", "2", "--join", seed, "--bind", "127.0.0.1:0",
		"--tls-dir", tls, "--allow-ca-key", "--join-timeout", "30s", "--timeout", "30s")
	var stdout, stderr strings.Builder
	members.Stdout, members.Stderr = &stdout, &stderr
	if err := members.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2500 * time.Millisecond)
	for _, a := range []struct{ name, bind string }{{"a1", seed}, {"a2", "127.0.0.1:0"}} {
		startAgentProcess(t, bin, a.name, "agent", "--name", a.name, "--role", "receiver", "--iface", "lo", "--allow-mgmt-iface",
			"--bind", a.bind, "--grpc", "127.0.0.1:0", "--join", seed, "--tls-dir", tls, "--allow-ca-key",
			"--state-dir", t.TempDir(), "--log-level", "warn")
	}
	if err := members.Wait(); err != nil {
		t.Fatalf("members started 2.5 s before its agents: %v\n%s", err, stderr.String())
	}
	t.Logf("members listed both agents %s after it started", time.Since(t0).Round(time.Millisecond))
	var ms []coordinator.Member
	if err := json.Unmarshal([]byte(stdout.String()), &ms); err != nil {
		t.Fatalf("members JSON: %v\n%s", err, stdout.String())
	}
	if len(ms) != 2 || ms[0].Name != "a1" || ms[1].Name != "a2" || ms[0].Health != "serving" || ms[1].Health != "serving" {
		t.Errorf("members: %+v\n%s", ms, stderr.String())
	}
	if !strings.Contains(stderr.String(), "waiting for the cluster: no seed answered yet") || strings.Contains(stderr.String(), "[WARN]") {
		t.Errorf("want the wait said once, and no warning:\n%s", stderr.String())
	}

	// No agent at all: the coordinator gives up at its deadline.
	t0 = time.Now()
	out, err := exec.CommandContext(ctx, bin, "members", "--join", dead, "--bind", "127.0.0.1:0",
		"--tls-dir", tls, "--allow-ca-key", "--join-timeout", "3s").CombinedOutput()
	took := time.Since(t0)
	if err == nil || !strings.Contains(string(out), "no seed answered in 3") || !strings.Contains(string(out), "last error") {
		t.Errorf("members without agents: %v\n%s", err, out)
	}
	if took < 3*time.Second || took > 15*time.Second {
		t.Errorf("members without agents gave up after %s, want about 3 s", took)
	}
}

// runBeforeAgents starts two `linerate run`s of a netns lab's sender s1
// and receiver r1 (mutual TLS, the gossip key, seeds both hosts' gossip
// addresses) before either host has an agent: the one with
// --join-timeout 1.5s is refused when it runs out, naming the agents it
// waited for, the seeds and the timeout, storing nothing and leaving its
// gossip port free; the one with 30 s, once the agents start 3 s after
// it, joins, finds both and ends exact, every packet of --count received.
// Then a run naming a receiver r9 that never comes is refused at its
// --join-timeout naming it and the timeout, leaving s1 unleased.
func runBeforeAgents(t *testing.T, bin, tls string) {
	nstest.SkipUnlessRoot(t)
	name := fmt.Sprintf("o%d", os.Getpid()%10000)
	l, err := lab.Up(lab.Spec{Name: name, Senders: 1, Receivers: 1, Mgmt: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "agents") // the agents' state
	t.Cleanup(func() {
		if err := l.Down(); err != nil {
			t.Error(err)
		}
		if err := os.RemoveAll(dir); err != nil {
			t.Error(err)
		}
		assertNoLab(t, name, dir)
	})
	s1, r1 := l.Senders[0], l.Receivers[0]
	at := func(h *lab.Host, port int) string { return net.JoinHostPort(h.MgmtAddr().String(), strconv.Itoa(port)) }
	for _, h := range l.Hosts() {
		linerateOK(t, bin, "certs", "issue", "--dir", tls, "--name", h.Name, "--role", "agent", "--host", h.MgmtAddr().String())
	}
	mhost := l.MgmtHost.Addr.Addr().String()
	results := t.TempDir()
	const count = 5000
	type pending struct {
		cmd            *exec.Cmd
		stdout, stderr strings.Builder
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	run := func(bind, joinTimeout, receivers string) *pending {
		t.Helper()
		p := &pending{}
		p.cmd = exec.CommandContext(ctx, bin, "run", "--join", at(s1, lab.GossipPort)+","+at(r1, lab.GossipPort), "--bind", bind,
			"--tls-dir", tls, "--allow-ca-key", "--join-timeout", joinTimeout, "--senders", s1.Name, "--receivers", receivers,
			"--count", strconv.Itoa(count), "--backend", "afpacket", "--drain", "200ms", "--json", "--results-dir", results)
		p.cmd.Stdout, p.cmd.Stderr = &p.stdout, &p.stderr
		if err := p.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return p
	}
	stored := func() []string {
		files, _ := filepath.Glob(filepath.Join(results, "*"))
		return files
	}

	t0 := time.Now()
	late := run(net.JoinHostPort(mhost, "0"), "30s", r1.Name)
	refusedBind := net.JoinHostPort(mhost, strconv.Itoa(lab.GossipPort))
	refused := run(refusedBind, "1.5s", r1.Name)
	err = refused.cmd.Wait()
	took := time.Since(t0)
	out := refused.stdout.String() + refused.stderr.String()
	if err == nil || !strings.Contains(out, "waiting for agents s1, r1: join the cluster at "+at(s1, lab.GossipPort)+", "+at(r1, lab.GossipPort)) ||
		!strings.Contains(out, "no seed answered in 1.5") || !strings.Contains(out, "--join-timeout") {
		t.Errorf("run without agents: %v\n%s", err, out)
	}
	if took < 1500*time.Millisecond || took > 10*time.Second {
		t.Errorf("run without agents gave up after %s, want about 1.5 s", took)
	}
	t.Logf("the run with --join-timeout 1.5s refused after %s: %s", took.Round(time.Millisecond), out[strings.LastIndex(out, "linerate: "):])
	// Nothing left behind: no result stored, its gossip port free.
	if files := stored(); len(files) != 0 {
		t.Errorf("a run that never joined stored %v", files)
	}
	if ln, err := net.Listen("tcp", refusedBind); err != nil {
		t.Errorf("the refused run's gossip port (tcp): %v", err)
	} else {
		ln.Close()
	}
	if pc, err := net.ListenPacket("udp", refusedBind); err != nil {
		t.Errorf("the refused run's gossip port (udp): %v", err)
	} else {
		pc.Close()
	}

	// The agents, 3 s after the runs started.
	time.Sleep(time.Until(t0.Add(3 * time.Second)))
	agentsAt := time.Since(t0)
	for _, h := range l.Hosts() {
		role := "receiver"
		if h == s1 {
			role = "sender"
		}
		args := []string{"agent", "--name", h.Name, "--role", role, "--iface", "data0",
			"--bind", at(h, lab.GossipPort), "--grpc", at(h, lab.GRPCPort), "--tls-dir", tls, "--allow-ca-key",
			"--state-dir", filepath.Join(dir, h.Name), "--log-level", "warn"}
		if h != s1 {
			args = append(args, "--join", at(s1, lab.GossipPort))
		}
		startAgentCmd(t, h.Name, h.NS.Command(context.Background(), bin, args...))
	}
	err = late.cmd.Wait()
	t.Logf("the run started %s before its agents ended %s after it started", agentsAt.Round(time.Millisecond), time.Since(t0).Round(time.Millisecond))
	var res coordinator.Result
	if jerr := json.Unmarshal([]byte(late.stdout.String()), &res); err != nil || jerr != nil || res.Status != coordinator.StatusOK {
		t.Fatalf("run started before its agents: %v; JSON %v; status %s: %s\n%s", err, jerr, res.Status, res.Error, late.stderr.String())
	}
	if len(res.Flows) != 1 {
		t.Fatalf("%d flows, want 1: %+v", len(res.Flows), res.Flows)
	}
	if f := res.Flows[0]; f.Sender != s1.Name || f.Receiver != r1.Name || f.Sent != count || f.Received != count || f.Lost != 0 || f.Duplicates != 0 {
		t.Errorf("flow %s→%s: sent %d received %d lost %d duplicates %d; want %d sent and received", f.Sender, f.Receiver, f.Sent, f.Received, f.Lost, f.Duplicates, count)
	}
	if e := late.stderr.String(); !strings.Contains(e, "waiting for the cluster: no seed answered yet") || !strings.Contains(e, "joined the cluster") {
		t.Errorf("want the wait and the join after it said:\n%s", e)
	}

	// A receiver that never comes: refused at --join-timeout, naming it.
	t0 = time.Now()
	never := run(net.JoinHostPort(mhost, "0"), "2s", "r9")
	err = never.cmd.Wait()
	took = time.Since(t0)
	res = coordinator.Result{}
	jerr := json.Unmarshal([]byte(never.stdout.String()), &res)
	e := never.stderr.String()
	if err == nil || jerr != nil || res.Status != coordinator.StatusFailed || res.FailedPhase != coordinator.PhaseDiscover ||
		!strings.Contains(res.Error, "r9") || !strings.Contains(res.Error, "not a member of the cluster") ||
		!strings.Contains(e, "not alive: r9") || !strings.Contains(e, "join-timeout=2s") {
		t.Errorf("run of a receiver that never comes: %v; JSON %v; status %s phase %s: %s\n%s", err, jerr, res.Status, res.FailedPhase, res.Error, e)
	}
	if took < 2*time.Second || took > 15*time.Second {
		t.Errorf("run of a receiver that never comes gave up after %s, want about 2 s", took)
	}
	t.Logf("the run of r9 refused after %s: %s", took.Round(time.Millisecond), res.Error)
	// Nothing left behind on s1: it answers, and holds no lease.
	conn, err := coordinator.TLSDialer(mtls.Options{Dir: tls, Name: "coordinator", AllowCAKey: true})(
		coordinator.Member{Name: s1.Name, Tags: gossip.Tags{GRPC: at(s1, lab.GRPCPort)}})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	dctx, dcancel := context.WithTimeout(ctx, 5*time.Second)
	defer dcancel()
	if d, err := lineratev1.NewAgentClient(conn).Describe(dctx, &lineratev1.DescribeRequest{}); err != nil || d.GetLease() != nil {
		t.Errorf("s1 after the refused run: lease %v, %v", d.GetLease(), err)
	}
}
