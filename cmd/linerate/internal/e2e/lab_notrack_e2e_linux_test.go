//go:build linux && traffic

package e2e

import (
	"context"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/linerate/linerate/cmd/linerate/internal/lab"
	"github.com/linerate/linerate/coordinator"
	"github.com/linerate/linerate/doctor"
	"github.com/linerate/linerate/receiver"
	"github.com/linerate/linerate/topology"
)

// nftIn runs nft in a lab host's namespace, stdin as its input.
func nftIn(t *testing.T, ns, stdin string, args ...string) string {
	t.Helper()
	cmd := exec.Command("ip", append([]string{"netns", "exec", ns, "nft"}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("ip netns exec %s nft %v: %v\n%s", ns, args, err, out)
	}
	return string(out)
}

// TestLabRunPreflightFixNotrack: a lab receiver whose firewall tracks
// connections (a ruleset loaded with the real nft, as an operator would):
// its conntrack check FAILs, naming the rule, so --preflight strict is
// refused before any lease; --preflight fix journals and adds the NOTRACK
// table for the run's addresses, the run balances, the receiver's
// conntrack table stays empty (the known truth: no entry was made), and
// the release puts the ruleset back exactly; a run that only warns then
// leaves entries in that table. The receiver counts with AF_PACKET, so
// the frames go on up the stack through conntrack's hooks (an XDP receiver
// ends them before any).
func TestLabRunPreflightFixNotrack(t *testing.T) {
	requireNft(t)
	r := startRelLabRoots(t, "n", 1, 1, false)
	r.waitAlive()
	ns := lab.Prefix(r.name) + "r1"
	const count = "/proc/sys/net/netfilter/nf_conntrack_count"
	nftIn(t, ns, `table inet filter {
	chain input {
		type filter hook input priority filter; policy accept;
		ct state established,related accept
	}
}
`, "-f", "-")
	before := nftIn(t, ns, "", "list", "ruleset")
	// entries are r1's conntrack entries of the test traffic: those of its
	// data address (the agents' gRPC and gossip on the management
	// network are tracked, and are not the test's).
	data := ""
	for _, h := range r.lab.Receivers {
		data = "dst=" + h.Addr().String() + " "
	}
	entries := func() int {
		n := 0
		for _, line := range strings.Split(nsFile(t, ns, "/proc/net/nf_conntrack", ""), "\n") {
			if strings.Contains(line, data) {
				n++
			}
		}
		return n
	}
	if n, err := strconv.Atoi(nsFile(t, ns, count, "")); err != nil || entries() != 0 {
		t.Fatalf("r1's conntrack before any run: %d entries (%v), %d of the test traffic", n, err, entries())
	}
	run := func(p coordinator.Preflight) *coordinator.Result {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		res, err := r.runner(nil).Run(ctx, coordinator.Spec{Senders: []string{"s1"}, Receivers: []string{"r1"}, Count: 2000, Rate: 20000,
			Method: receiver.MethodAFPacket, Drain: 200 * time.Millisecond, Preflight: p})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	host := func(res *coordinator.Result, name string) *coordinator.Host {
		for i := range res.Hosts {
			if res.Hosts[i].Name == name {
				return &res.Hosts[i]
			}
		}
		t.Fatalf("no host %s in the result", name)
		return nil
	}

	res := run(coordinator.PreflightStrict)
	if res.Status == coordinator.StatusOK || !strings.Contains(res.Error, "r1: conntrack: ") || !strings.Contains(res.Error, "inet filter/input: ct state established,related accept") {
		t.Fatalf("strict: %s %q: want refused naming r1's conntrack check and the rule", res.Status, res.Error)
	}

	res = run(coordinator.PreflightFix)
	if res.Status != coordinator.StatusOK {
		t.Fatalf("fix: %s: %s", res.Status, res.Error)
	}
	r1 := host(res, "r1")
	fixed := slices.IndexFunc(r1.Fixed, func(a doctor.Applied) bool {
		return a.Class == doctor.FixNotrack && a.Setting.Kind == topology.KindNftTable && a.Setting.Key == "inet linerate"
	})
	if fixed < 0 || !r1.FixesRestored {
		t.Errorf("r1 fixed %+v, restored %v: want the notrack table, restored", r1.Fixed, r1.FixesRestored)
	}
	for _, f := range res.Flows {
		if f.Sent != 2000 || f.Received != f.Sent {
			t.Errorf("flow %s→%s: sent %d received %d, want 2000 both", f.Sender, f.Receiver, f.Sent, f.Received)
		}
	}
	if n := entries(); n != 0 {
		t.Errorf("r1's conntrack holds %d entries after the run under NOTRACK, want 0", n)
	}
	if after := nftIn(t, ns, "", "list", "ruleset"); after != before {
		t.Errorf("r1's ruleset after the run differs from before it:\n%s\nwant:\n%s", after, before)
	}

	// Without the fix the same run is tracked: the difference is the fix's.
	res = run(coordinator.PreflightWarn)
	if res.Status != coordinator.StatusOK {
		t.Fatalf("warn: %s: %s", res.Status, res.Error)
	}
	if c := host(res, "r1").Checks; !slices.ContainsFunc(c, func(ch doctor.Check) bool { return ch.ID == "conntrack" && ch.Status == doctor.Fail }) {
		t.Errorf("r1's checks %+v: want conntrack FAIL", c)
	}
	if n := entries(); n == 0 {
		t.Error("r1's conntrack holds no entry after a run without NOTRACK: the test proves nothing")
	}
	t.Logf("r1: strict refused; fix: NOTRACK added, %d flows balanced, 0 conntrack entries, ruleset restored; warn: %d entries", len(res.Flows), entries())
}
