package doctor

import (
	"context"
	"errors"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/linerate/linerate/topology"
)

// fakeFirewall is a Firewall whose ruleset is a FirewallState; AddNotrack
// records the journal as it finds it, to show the fix journals first.
type fakeFirewall struct {
	st      FirewallState
	err     error
	table   string // the NOTRACK table's text; "" absent
	added   [][]netip.Addr
	journal func() []topology.Setting
	seen    []topology.Setting // the journal when AddNotrack ran
}

func (f *fakeFirewall) Inspect([]netip.Addr) (FirewallState, error) { return f.st, f.err }
func (f *fakeFirewall) AddNotrack(a []netip.Addr) error {
	f.seen = f.journal()
	f.added = append(f.added, a)
	f.table = "table inet linerate { ... }"
	return nil
}
func (f *fakeFirewall) NotrackSetting() topology.Setting {
	return topology.Setting{Kind: topology.KindNftTable, Key: "inet linerate"}
}
func (f *fakeFirewall) Restorer() topology.SettingRestorer { return fakeRestorer{f} }

type fakeRestorer struct{ f *fakeFirewall }

func (r fakeRestorer) Current(topology.Setting) (string, error) { return r.f.table, nil }
func (r fakeRestorer) Restore(topology.Setting) error           { r.f.table = ""; return nil }

// conntrackRoot is a host root with interface veth0 and the given files.
func conntrackRoot(t *testing.T, files map[string]string) topology.Root {
	t.Helper()
	dir := t.TempDir()
	files["/sys/class/net/veth0/mtu"] = "1500"
	files["/proc/sys/kernel/osrelease"] = "6.18.0"
	var errs []error
	for name, content := range files {
		p := filepath.Join(dir, name)
		err := os.MkdirAll(filepath.Dir(p), 0o755)
		switch {
		case err != nil:
		case content == "<dir>":
			err = os.Mkdir(p, 0o755)
		default:
			err = os.WriteFile(p, []byte(content+"\n"), 0o644)
		}
		errs = append(errs, err)
	}
	r, err := topology.OpenRoot(dir)
	if err := errors.Join(append(errs, err)...); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

var runAddrs = []netip.Addr{netip.MustParseAddr("198.18.0.1"), netip.MustParseAddr("198.18.0.2")}

const trackRule = "inet filter/input: ct state established,related accept"

func loaded(count string) map[string]string {
	return map[string]string{conntrackCount: count, conntrackModule: "<dir>"}
}

func TestCheckConntrack(t *testing.T) {
	cases := []struct {
		name   string
		files  map[string]string
		fw     Firewall
		status Status
		want   []string // substrings of the evidence
		fix    string   // substring of the fix; "" none
		class  FixClass
		first  string // substring of the first evidence item; "" not checked
	}{
		{name: "not loaded", files: map[string]string{}, fw: &fakeFirewall{st: FirewallState{Tracking: []string{trackRule}}},
			status: Pass, want: []string{conntrackCount + ": not readable", conntrackModule + ": absent", "not loaded"}},
		{name: "tracked", files: loaded("3"), fw: &fakeFirewall{st: FirewallState{Tracking: []string{trackRule}, Tables: []string{"inet filter"}}},
			status: Fail, want: []string{conntrackCount + ": 3", "track: " + trackRule, "no notrack rule", "198.18.0.1, 198.18.0.2"},
			fix: "add rule inet linerate prerouting ip saddr 198.18.0.1 notrack", class: FixNotrack,
			first: trackRule + " tracks 198.18.0.1, 198.18.0.2, with no notrack rule before conntrack"},
		{name: "notracked", files: loaded("0"), fw: &fakeFirewall{st: FirewallState{Tracking: []string{trackRule}, Notracked: true}},
			status: Pass, want: []string{"track: " + trackRule, "notrack rules before conntrack"}},
		{name: "no rule tracks", files: loaded("0"), fw: &fakeFirewall{st: FirewallState{Tables: []string{"inet filter"}}},
			status: Pass, want: []string{"no nftables rule uses conntrack", "inet filter"}},
		{name: "entries with no rule", files: loaded("12"), fw: &fakeFirewall{},
			status: Warn, want: []string{"12 connections tracked with no nftables rule"}, fix: "notrack", class: FixNotrack,
			first: conntrackCount + ": 12 connections tracked"},
		{name: "legacy tables", files: map[string]string{conntrackCount: "0", "/proc/net/ip_tables_names": "raw\nfilter"}, fw: &fakeFirewall{},
			status: Warn, want: []string{"/proc/net/ip_tables_names: raw, filter (iptables-legacy rules are not read)"}, fix: "iptables-legacy-save"},
		{name: "no firewall", files: loaded("0"), fw: nil,
			status: Warn, want: []string{"cannot be read on this host root"}, fix: "nft list ruleset"},
		{name: "firewall error", files: loaded("0"), fw: &fakeFirewall{err: syscall.EPERM},
			status: Warn, want: []string{"operation not permitted"}, fix: "nft list ruleset"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := Host{Root: conntrackRoot(t, tc.files), RootName: "/", Firewall: tc.fw}
			rep, err := Run(context.Background(), h, Options{Iface: "veth0", Addrs: runAddrs})
			if err != nil {
				t.Fatal(err)
			}
			c := rep.Find("conntrack")
			if c.Status != tc.status {
				t.Errorf("status %s, want %s; evidence %q", c.Status, tc.status, c.Evidence)
			}
			ev := strings.Join(c.Evidence, "\n")
			for _, w := range tc.want {
				if !strings.Contains(ev, w) {
					t.Errorf("evidence lacks %q:\n%s", w, ev)
				}
			}
			if (tc.fix == "") != (c.Fix == "") || !strings.Contains(c.Fix, tc.fix) {
				t.Errorf("fix %q, want one with %q", c.Fix, tc.fix)
			}
			if c.FixClass != tc.class {
				t.Errorf("fix class %q, want %q", c.FixClass, tc.class)
			}
			if c.Why == "" {
				t.Error("no why")
			}
			if tc.first != "" && !strings.Contains(c.Evidence[0], tc.first) {
				t.Errorf("first evidence %q, want the finding %q", c.Evidence[0], tc.first)
			}
		})
	}
}

// TestNotrackCommandNoAddrs: without the run's addresses the fix
// untracks the interface, and --fix cannot apply it.
func TestNotrackCommandNoAddrs(t *testing.T) {
	h := Host{Root: conntrackRoot(t, loaded("1")), RootName: "/", Firewall: &fakeFirewall{st: FirewallState{Tracking: []string{trackRule}}}}
	rep, err := Run(context.Background(), h, Options{Iface: "veth0"})
	if err != nil {
		t.Fatal(err)
	}
	c := rep.Find("conntrack")
	if c.Status != Fail || c.FixClass != "" || !strings.Contains(c.Fix, `prerouting iifname "veth0" notrack`) {
		t.Errorf("got %s fix %q class %q", c.Status, c.Fix, c.FixClass)
	}
}

func TestCheckFirewall(t *testing.T) {
	rule := "inet filter/input: ip saddr 198.18.0.0/15 drop"
	for _, tc := range []struct {
		name   string
		fw     Firewall
		status Status
		want   string
	}{
		{"path rule", &fakeFirewall{st: FirewallState{PathRules: []string{rule, "inet filter/input: policy drop (hook input)"}}}, Warn, rule},
		{"clean", &fakeFirewall{st: FirewallState{Tables: []string{"inet filter"}}}, Pass, "no rule or drop policy"},
		{"no firewall", nil, Warn, "cannot be read"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := Host{Root: conntrackRoot(t, loaded("0")), RootName: "/", Firewall: tc.fw}
			rep, err := Run(context.Background(), h, Options{Iface: "veth0", Addrs: runAddrs})
			if err != nil {
				t.Fatal(err)
			}
			c := rep.Find("firewall")
			if c.Status != tc.status || !strings.Contains(strings.Join(c.Evidence, "\n"), tc.want) {
				t.Errorf("got %s %q, want %s with %q", c.Status, c.Evidence, tc.status, tc.want)
			}
			if tc.status != Pass && !strings.Contains(c.Evidence[0], tc.want) {
				t.Errorf("first evidence %q, want the finding %q", c.Evidence[0], tc.want)
			}
			if tc.status == Warn && tc.fw != nil && !strings.Contains(c.Fix, "nft -a list chain inet filter input") {
				t.Errorf("fix %q", c.Fix)
			}
		})
	}
}

func TestFixNotrack(t *testing.T) {
	state := t.TempDir()
	jo := topology.JournalOptions{StateDir: state, Owner: "test"}
	journal := func() []topology.Setting {
		s, err := topology.JournaledSettings(state, "veth0")
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	fw := &fakeFirewall{st: FirewallState{Tracking: []string{trackRule}}, journal: journal}
	h := Host{Root: conntrackRoot(t, loaded("2")), RootName: "/", Firewall: fw}
	o := Options{Iface: "veth0", Addrs: runAddrs}
	applied, err := Fix(context.Background(), h, o, FixOptions{Classes: []FixClass{FixNotrack}, Journal: jo})
	if err != nil {
		t.Fatal(err)
	}
	if len(fw.added) != 1 || len(fw.added[0]) != 2 {
		t.Fatalf("AddNotrack calls %v", fw.added)
	}
	if len(fw.seen) != 1 || fw.seen[0].Kind != topology.KindNftTable || fw.seen[0].Original != "" || fw.seen[0].Class != "notrack" {
		t.Errorf("journal when AddNotrack ran: %+v, want the table journaled absent first", fw.seen)
	}
	if len(applied) != 1 || applied[0].To != fw.table {
		t.Errorf("applied %+v", applied)
	}
	if s := journal(); len(s) != 1 || s[0].Applied != fw.table {
		t.Errorf("journal after: %+v", s)
	}
	if _, err := topology.Restore(context.Background(), h.Root, topology.RestoreOptions{StateDir: state, Iface: "veth0", RootName: "/", Settings: Restorers(h)}); err != nil {
		t.Fatal(err)
	}
	if fw.table != "" {
		t.Errorf("table %q after restore", fw.table)
	}
}

// TestFixNotrackExisting: a table of that name already there is refused,
// nothing journaled, nothing added.
func TestFixNotrackExisting(t *testing.T) {
	state := t.TempDir()
	fw := &fakeFirewall{st: FirewallState{Tracking: []string{trackRule}}, table: "table inet linerate { someone's }"}
	h := Host{Root: conntrackRoot(t, loaded("2")), RootName: "/", Firewall: fw}
	_, err := Fix(context.Background(), h, Options{Iface: "veth0", Addrs: runAddrs}, FixOptions{Classes: []FixClass{FixNotrack}, Journal: topology.JournalOptions{StateDir: state}})
	if err == nil || !strings.Contains(err.Error(), "already exists") || !strings.Contains(err.Error(), "nft delete table inet linerate") {
		t.Fatalf("err %v", err)
	}
	if len(fw.added) != 0 || fw.table != "table inet linerate { someone's }" {
		t.Errorf("added %v, table %q", fw.added, fw.table)
	}
	if s, _ := topology.JournaledSettings(state, "veth0"); len(s) != 0 {
		t.Errorf("journaled %+v", s)
	}
}

// TestFixNotrackNothingTracks: on a host where nothing tracks (conntrack
// not loaded, or loaded with no rule and no connection) --fix notrack has
// nothing to do, so an interface without an address is no error (which
// would stop the fixes after it); where something tracks it still is.
func TestFixNotrackNothingTracks(t *testing.T) {
	for _, tc := range []struct {
		name    string
		files   map[string]string
		fw      *fakeFirewall
		wantErr string
	}{
		{"not loaded", map[string]string{}, &fakeFirewall{st: FirewallState{Tracking: []string{trackRule}}}, ""},
		{"nothing tracks", loaded("0"), &fakeFirewall{}, ""},
		{"tracked", loaded("2"), &fakeFirewall{st: FirewallState{Tracking: []string{trackRule}}}, "needs the run's test addresses"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := Host{Root: conntrackRoot(t, tc.files), RootName: "/", Firewall: tc.fw}
			_, err := Fix(context.Background(), h, Options{Iface: "veth0"}, FixOptions{Classes: []FixClass{FixNotrack}, Journal: topology.JournalOptions{StateDir: t.TempDir()}})
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Errorf("err %v, want %q", err, tc.wantErr)
			}
			if len(tc.fw.added) != 0 {
				t.Errorf("added %v", tc.fw.added)
			}
		})
	}
}
