//go:build linux && traffic

package nft_test

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/linerate/linerate/doctor"
	"github.com/linerate/linerate/doctor/nft"
	"github.com/linerate/linerate/internal/netns"
	"github.com/linerate/linerate/internal/netns/nstest"
	"github.com/linerate/linerate/topology"
)

// trackingRuleset is a stateful firewall of the kind hosts ship: new
// flows only to the test port, replies by conntrack state, the rest
// dropped.
const trackingRuleset = `table inet filter {
	chain input {
		type filter hook input priority filter; policy drop;
		ct state established,related accept
		iifname "lo" accept
		udp dport 9000 accept
	}
}
`

const countFile = "/proc/sys/net/netfilter/nf_conntrack_count"

// nsRoot reads /proc inside a namespace (nf_conntrack_count is per
// namespace), /sys/module on the host (modules are global) and the rest
// from a fixture tree holding the interface (the host's sysfs does not
// show another namespace's links).
type nsRoot struct {
	ns *netns.NS
	*topology.DirRoot
}

func (r nsRoot) ReadFile(name string) ([]byte, error) {
	if !strings.HasPrefix(name, "/proc/") {
		return r.DirRoot.ReadFile(name)
	}
	var b []byte
	err := r.ns.Do(func() error {
		var err error
		b, err = os.ReadFile(name)
		return err
	})
	return b, err
}

func (r nsRoot) Stat(name string) (os.FileInfo, error) {
	if strings.HasPrefix(name, "/sys/module/") {
		return os.Stat(name)
	}
	return r.DirRoot.Stat(name)
}

func needNft(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("nft"); err != nil {
		missingNft(t, os.Getenv("CI"))
	}
}

// missingNft ends a test that needs nft on a host without it: a failure
// in CI (CI=true), which must not pass on a skip, a skip elsewhere.
func missingNft(t testing.TB, ci string) {
	t.Helper()
	const why = "needs nft (make deps installs Debian's nftables)"
	if ci == "true" {
		t.Fatal(why + "; CI must have it")
	}
	t.Skip(why)
}

// endTB records how a test would have ended instead of ending it: its
// Fatal and Skip return, so the first call is the verdict.
type endTB struct {
	testing.TB
	ended string
}

func (e *endTB) Helper()      {}
func (e *endTB) Fatal(...any) { e.end("fatal") }
func (e *endTB) Skip(...any)  { e.end("skip") }
func (e *endTB) end(how string) {
	if e.ended == "" {
		e.ended = how
	}
}

// TestMissingNft: without nft a test fails in CI and skips elsewhere.
func TestMissingNft(t *testing.T) {
	for ci, want := range map[string]string{"true": "fatal", "": "skip", "false": "skip"} {
		e := &endTB{TB: t}
		missingNft(e, ci)
		if e.ended != want {
			t.Errorf("CI=%q: %s, want %s", ci, e.ended, want)
		}
	}
}

// nftIn runs nft in ns with args, stdin in.
func nftIn(t *testing.T, ns *netns.NS, in string, args ...string) string {
	t.Helper()
	cmd := ns.Command(context.Background(), "nft", args...)
	cmd.Stdin = strings.NewReader(in)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("nft %s in %s: %v: %s", strings.Join(args, " "), ns.Name, err, out)
	}
	return string(out)
}

// rulesets are `nft list ruleset` and `nft -j list ruleset`.
func rulesets(t *testing.T, ns *netns.NS) [2]string {
	return [2]string{nftIn(t, ns, "", "list", "ruleset"), nftIn(t, ns, "", "-j", "list", "ruleset")}
}

func count(t *testing.T, ns *netns.NS) int {
	t.Helper()
	var n int
	if err := ns.Do(func() error {
		b, err := os.ReadFile(countFile)
		if err != nil {
			return err
		}
		n, err = strconv.Atoi(strings.TrimSpace(string(b)))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return n
}

// host is namespace b as doctor sees it: its /proc, its ruleset over a
// socket opened inside it, a fixture sysfs with its interface.
func host(t *testing.T, p *nstest.Pair) (doctor.Host, *nft.Firewall) {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(dir+"/sys/class/net/"+p.B.Name, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dir+"/sys/class/net/"+p.B.Name+"/mtu", []byte("1500\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dr, err := topology.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dr.Close() })
	var fw *nft.Firewall
	if err := p.B.NS.Do(func() error {
		var err error
		fw, err = nft.Open(p.B.Name)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fw.Close() })
	return doctor.Host{Root: nsRoot{p.B.NS, dr}, RootName: "netns:" + p.B.NS.Name, Firewall: fw}, fw
}

// sendFlows sends per datagrams from each of flows sockets (each its own
// source port: one conntrack entry each) in a to b:9000, and returns how
// many b received.
func sendFlows(t *testing.T, p *nstest.Pair, flows, per int) int {
	t.Helper()
	var ln *net.UDPConn
	listen := func() (err error) {
		ln, err = net.ListenUDP("udp4", &net.UDPAddr{IP: net.ParseIP("198.18.0.2"), Port: 9000})
		return err
	}
	if err := p.B.NS.Do(listen); err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if err := p.A.NS.Do(func() error {
		for range flows {
			c, err := net.DialUDP("udp4", nil, &net.UDPAddr{IP: net.ParseIP("198.18.0.2"), Port: 9000})
			if err != nil {
				return err
			}
			for range per {
				if _, err := c.Write([]byte("linerate")); err != nil {
					c.Close()
					return err
				}
			}
			c.Close()
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	got := 0
	buf := make([]byte, 64)
	for got < flows*per {
		_ = ln.SetReadDeadline(time.Now().Add(2 * time.Second))
		if _, err := ln.Read(buf); err != nil {
			break
		}
		got++
	}
	return got
}

// TestLiveConntrackNotrack: on a namespace whose firewall tracks
// connections, the conntrack check fails naming the rule; --fix notrack
// journals and adds linerate's table; the same UDP flows then make no
// conntrack entry; the restore puts the ruleset back byte for byte, and
// the flows are tracked again. The check's own Fix command, pasted into
// nft, passes the check.
func TestLiveConntrackNotrack(t *testing.T) {
	needNft(t)
	p := nstest.NewPair(t, 1)
	addrs := []netip.Addr{netip.MustParseAddr("198.18.0.1"), netip.MustParseAddr("198.18.0.2")}
	const flows, per = 8, 10

	if n := count(t, p.B.NS); n != 0 {
		t.Fatalf("nf_conntrack_count %d in a fresh namespace", n)
	}
	nftIn(t, p.B.NS, trackingRuleset, "-f", "-")
	before := rulesets(t, p.B.NS)
	h, _ := host(t, p)
	o := doctor.Options{Iface: p.B.Name, Addrs: addrs, Role: doctor.RoleReceiver}

	rep, err := doctor.Run(context.Background(), h, o)
	if err != nil {
		t.Fatal(err)
	}
	c := rep.Find("conntrack")
	t.Logf("conntrack: %s\n  %s\n  fix: %s", c.Status, strings.Join(c.Evidence, "\n  "), c.Fix)
	const rule = "inet filter/input: ct state established,related accept"
	if c.Status != doctor.Fail || !strings.Contains(strings.Join(c.Evidence, "\n"), rule) || c.FixClass != doctor.FixNotrack {
		t.Fatalf("conntrack check %s, want FAIL naming %q with fix class notrack", c.Status, rule)
	}
	fwc := rep.Find("firewall")
	t.Logf("firewall: %s\n  %s", fwc.Status, strings.Join(fwc.Evidence, "\n  "))
	if fwc.Status != doctor.Warn || !strings.Contains(strings.Join(fwc.Evidence, "\n"), "inet filter/input: policy drop") {
		t.Errorf("firewall check %s, want WARN naming the drop policy", fwc.Status)
	}

	state := t.TempDir()
	jo := topology.JournalOptions{StateDir: state, Owner: "test", RootName: h.RootName}
	applied, err := doctor.Fix(context.Background(), h, o, doctor.FixOptions{Classes: []doctor.FixClass{doctor.FixNotrack}, Journal: jo})
	if err != nil {
		t.Fatal(err)
	}
	js, err := topology.JournaledSettings(state, p.B.Name)
	if err != nil || len(js) != 1 || js[0].Kind != topology.KindNftTable || js[0].Key != nft.NotrackKey || js[0].Original != "" || js[0].Applied == "" {
		t.Fatalf("journal %+v (%v), want the table journaled absent, then applied", js, err)
	}
	t.Logf("applied: %s", applied[0].To)
	if rep, err = doctor.Run(context.Background(), h, o); err != nil {
		t.Fatal(err)
	} else if c := rep.Find("conntrack"); c.Status != doctor.Pass {
		t.Errorf("after the fix conntrack is %s: %q", c.Status, c.Evidence)
	}

	if got := sendFlows(t, p, flows, per); got != flows*per {
		t.Errorf("received %d of %d datagrams with notrack", got, flows*per)
	}
	if n := count(t, p.B.NS); n != 0 {
		t.Errorf("nf_conntrack_count %d after %d flows with notrack, want 0", n, flows)
	} else {
		t.Logf("with notrack: %d flows of %d datagrams received, nf_conntrack_count %d", flows, per, n)
	}

	res, err := topology.Restore(context.Background(), h.Root, topology.RestoreOptions{StateDir: state, Iface: p.B.Name, RootName: h.RootName, Owner: "test", Settings: doctor.Restorers(h)})
	if err != nil {
		t.Fatalf("restore: %v (%+v)", err, res)
	}
	after := rulesets(t, p.B.NS)
	if after != before {
		t.Errorf("ruleset after restore differs:\nbefore:\n%s\n%s\nafter:\n%s\n%s", before[0], before[1], after[0], after[1])
	}
	if js, _ := topology.JournaledSettings(state, p.B.Name); len(js) != 0 {
		t.Errorf("journal left after restore: %+v", js)
	}

	// The same flows without notrack: one entry each.
	if got := sendFlows(t, p, flows, per); got != flows*per {
		t.Errorf("received %d of %d datagrams", got, flows*per)
	}
	if n := count(t, p.B.NS); n != flows {
		t.Errorf("nf_conntrack_count %d after %d flows tracked, want %d", n, flows, flows)
	} else {
		t.Logf("restored: %d flows of %d datagrams received, nf_conntrack_count %d", flows, per, n)
	}

	// The Fix a person pastes does what --fix does.
	if out, err := p.B.NS.Command(context.Background(), "sh", "-c", c.Fix).CombinedOutput(); err != nil {
		t.Fatalf("pasting %s: %v: %s", c.Fix, err, out)
	}
	if rep, err = doctor.Run(context.Background(), h, o); err != nil {
		t.Fatal(err)
	} else if c := rep.Find("conntrack"); c.Status != doctor.Pass {
		t.Errorf("after pasting the fix conntrack is %s: %q", c.Status, c.Evidence)
	}
	nftIn(t, p.B.NS, "", "delete", "table", "inet", "linerate")
}

// TestLiveNotrackTableExists: a table inet linerate already there is
// refused by --fix and left exactly as it was; nothing is journaled.
func TestLiveNotrackTableExists(t *testing.T) {
	needNft(t)
	p := nstest.NewPair(t, 1)
	nftIn(t, p.B.NS, trackingRuleset+"table inet linerate {\n\tchain mine {\n\t\tcounter\n\t}\n}\n", "-f", "-")
	before := rulesets(t, p.B.NS)
	h, fw := host(t, p)
	o := doctor.Options{Iface: p.B.Name, Addrs: []netip.Addr{netip.MustParseAddr("198.18.0.1"), netip.MustParseAddr("198.18.0.2")}}
	state := t.TempDir()
	_, err := doctor.Fix(context.Background(), h, o, doctor.FixOptions{Classes: []doctor.FixClass{doctor.FixNotrack}, Journal: topology.JournalOptions{StateDir: state, RootName: h.RootName}})
	if err == nil || !strings.Contains(err.Error(), "already exists") || !strings.Contains(err.Error(), "nft delete table inet linerate") {
		t.Fatalf("fix: %v, want a refusal naming the table and how to remove it", err)
	}
	t.Logf("refused: %v", err)
	if err := fw.AddNotrack(o.Addrs); !errors.Is(err, nft.ErrTableExists) {
		t.Errorf("AddNotrack: %v, want ErrTableExists", err)
	}
	if after := rulesets(t, p.B.NS); after != before {
		t.Errorf("ruleset changed:\n%s\n%s", before[0], after[0])
	}
	if js, _ := topology.JournaledSettings(state, p.B.Name); len(js) != 0 {
		t.Errorf("journaled %+v", js)
	}
}
