package main

import (
	"regexp"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	lineratev1 "github.com/linerate/linerate/proto/linerate/v1"
)

// TestAgentRelease checks `linerate agent release`: it force-releases the
// lease of the agent running with that --state-dir, whoever holds it, and
// the host is restored; without a lease it says so; without an agent it
// fails naming the state directory.
func TestAgentRelease(t *testing.T) {
	root, state := host(t), t.TempDir()
	sum := treeSum(t, root)
	stderr, stop := startAgent(t, "serving the Agent service", "--role", "receiver", "--iface", "eth0", "--root", root, "--state-dir", state,
		"--insecure", "--grpc", "127.0.0.1:0", "--bind", "", "--name", "t1", "--allow-mgmt-iface")
	defer stop()
	if !strings.Contains(stderr.String(), "leases have no identity under --insecure") {
		t.Errorf("no warning that insecure leases have no identity:\n%s", stderr.String())
	}
	addr := regexp.MustCompile(`serving the Agent service: addr=(\S+)`).FindStringSubmatch(stderr.String())
	if addr == nil {
		t.Fatalf("no gRPC address logged:\n%s", stderr.String())
	}
	conn, err := grpc.NewClient(addr[1], grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	c := lineratev1.NewAgentClient(conn)
	ctx := t.Context()
	l, err := c.AcquireLease(ctx, &lineratev1.AcquireLeaseRequest{CoordinatorId: "team-a"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Tune(ctx, &lineratev1.TuneRequest{LeaseId: l.LeaseId, Irqbalance: "ignore"}); err != nil {
		t.Fatal(err)
	}
	if treeSum(t, root) == sum {
		t.Fatal("tune changed nothing: the test shows nothing")
	}

	code, out, errOut := linerate(t, "agent", "release", "--state-dir", state)
	if code != 0 || !strings.Contains(out, `released the lease of (no identity: --insecure) (coordinator_id "team-a", generation 1): 4 IRQ affinities restored`) {
		t.Errorf("release: exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}
	if treeSum(t, root) != sum {
		t.Error("the host is not restored after the force-release")
	}
	if _, err := c.RenewLease(ctx, &lineratev1.RenewLeaseRequest{LeaseId: l.LeaseId}); err == nil {
		t.Error("the force-released lease still renews")
	}
	code, out, _ = linerate(t, "agent", "release", "--state-dir", state, "--name", "t1", "--json")
	if code != 0 || !strings.Contains(out, `"released": false`) {
		t.Errorf("release without a lease: exit %d, %s", code, out)
	}
	empty := t.TempDir()
	code, _, errOut = linerate(t, "agent", "release", "--state-dir", empty, "--timeout", "5s")
	if code == 0 || !strings.Contains(errOut, "no agent admin socket in "+empty) {
		t.Errorf("release without an agent: exit %d, %s", code, errOut)
	}
}
