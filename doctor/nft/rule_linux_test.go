package nft

import (
	"encoding/binary"
	"net/netip"
	"strings"
	"testing"

	"github.com/google/nftables"
	"github.com/google/nftables/expr"
)

// a1 and a2 are the run's addresses, other one outside the run.
var a1, a2, other = netip.MustParseAddr("198.18.0.1"), netip.MustParseAddr("198.18.0.2"), netip.MustParseAddr("10.0.0.1")

const inet = nftables.TableFamilyINet

func u32(v uint32) []byte { b := make([]byte, 4); binary.NativeEndian.PutUint32(b, v); return b }

// ctEstablished is `ct state established,related accept` as nft 1.0
// compiles it.
var ctEstablished = []expr.Any{
	&expr.Ct{Register: 1, Key: expr.CtKeySTATE},
	&expr.Bitwise{SourceRegister: 1, DestRegister: 1, Len: 4, Mask: u32(expr.CtStateBitESTABLISHED | expr.CtStateBitRELATED), Xor: u32(0)},
	&expr.Cmp{Op: expr.CmpOpNeq, Register: 1, Data: u32(0)},
	&expr.Verdict{Kind: expr.VerdictAccept},
}

func saddrPrefix(p netip.Prefix, then ...expr.Any) []expr.Any {
	mask := make([]byte, 4)
	for i := 0; i < p.Bits(); i++ {
		mask[i/8] |= 0x80 >> (i % 8)
	}
	return append([]expr.Any{
		&expr.Meta{Key: expr.MetaKeyNFPROTO, Register: 1},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: []byte{2}},
		&expr.Payload{DestRegister: 1, Base: expr.PayloadBaseNetworkHeader, Offset: 12, Len: 4},
		&expr.Bitwise{SourceRegister: 1, DestRegister: 1, Len: 4, Mask: mask, Xor: make([]byte, 4)},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: p.Addr().AsSlice()},
	}, then...)
}

func TestParseRule(t *testing.T) {
	udp := []expr.Any{
		&expr.Meta{Key: expr.MetaKeyL4PROTO, Register: 1},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: []byte{17}},
		&expr.Notrack{},
	}
	for _, tc := range []struct {
		name           string
		exprs          []expr.Any
		text           string
		tracks, untrac bool
		acts           int
		covers1, cover bool // covers a1; covers other
		touches        bool // touches {a1, a2}
	}{
		{"ct state", ctEstablished, "ct state established,related accept", true, false, 0, false, false, true},
		{"notrack one address", notrackRule(a1, 12), "meta nfproto ipv4 ip saddr 198.18.0.1 notrack", false, true, 0, true, false, true},
		{"notrack prefix", saddrPrefix(netip.MustParsePrefix("198.18.0.0/15"), &expr.Notrack{}), "meta nfproto ipv4 ip saddr 198.18.0.0/15 notrack", false, true, 0, true, false, true},
		{"notrack all", []expr.Any{&expr.Notrack{}}, "notrack", false, true, 0, true, true, true},
		{"notrack udp only", udp, "meta l4proto udp notrack", false, true, 0, false, false, true},
		{"drop elsewhere", saddrPrefix(netip.MustParsePrefix("10.0.0.0/8"), &expr.Verdict{Kind: expr.VerdictDrop}), "meta nfproto ipv4 ip saddr 10.0.0.0/8 drop", false, false, 1, false, true, false},
		{"masquerade", []expr.Any{&expr.Masq{}}, "masquerade", true, false, 1, true, true, true},
		{"notrack ip6", notrackRule(netip.MustParseAddr("2001:db8::1"), 8), "meta nfproto ipv6 ip6 saddr 2001:db8::1 notrack", false, true, 0, false, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := parseRule(inet, tc.exprs, nil)
			if r.text != tc.text {
				t.Errorf("text %q, want %q", r.text, tc.text)
			}
			if r.tracks != tc.tracks || r.notrack != tc.untrac || len(r.acts) != tc.acts {
				t.Errorf("tracks %v notrack %v acts %v", r.tracks, r.notrack, r.acts)
			}
			if got := r.covers(inet, a1); got != tc.covers1 {
				t.Errorf("covers %s: %v", a1, got)
			}
			if got := r.covers(inet, other); got != tc.cover {
				t.Errorf("covers %s: %v", other, got)
			}
			if got := r.touches(inet, []netip.Addr{a1, a2}); got != tc.touches {
				t.Errorf("touches: %v", got)
			}
		})
	}
}

// TestSetRanges: an interval set's elements (start, exclusive end) and a
// plain set's addresses, as a lookup sees them.
func TestSetRanges(t *testing.T) {
	ival := &nftables.Set{Name: "bench", Interval: true, KeyType: nftables.TypeIPAddr}
	els := []nftables.SetElement{
		{Key: []byte{198, 20, 0, 0}, IntervalEnd: true},
		{Key: []byte{198, 18, 0, 0}},
		{Key: []byte{0, 0, 0, 0}, IntervalEnd: true},
	}
	lookup := []expr.Any{
		&expr.Payload{DestRegister: 1, Base: expr.PayloadBaseNetworkHeader, Offset: 16, Len: 4},
		&expr.Lookup{SourceRegister: 1, SetName: "bench"},
		&expr.Notrack{},
	}
	sets := func(string) (*nftables.Set, []nftables.SetElement, error) { return ival, els, nil }
	r := parseRule(nftables.TableFamilyIPv4, lookup, sets)
	if r.text != "ip daddr @bench notrack" {
		t.Errorf("text %q", r.text)
	}
	for a, want := range map[string]bool{"198.18.0.1": true, "198.19.255.255": true, "198.20.0.0": false, "10.0.0.1": false} {
		if got := r.covers(nftables.TableFamilyIPv4, netip.MustParseAddr(a)); got != want {
			t.Errorf("covers %s: %v, want %v", a, got, want)
		}
	}
	plain := &nftables.Set{Name: "hosts", KeyType: nftables.TypeIPAddr}
	r = parseRule(nftables.TableFamilyIPv4, lookup, func(string) (*nftables.Set, []nftables.SetElement, error) {
		return plain, []nftables.SetElement{{Key: a1.AsSlice()}}, nil
	})
	if !r.covers(nftables.TableFamilyIPv4, a1) || r.covers(nftables.TableFamilyIPv4, a2) {
		t.Errorf("plain set: covers a1 %v a2 %v", r.covers(nftables.TableFamilyIPv4, a1), r.covers(nftables.TableFamilyIPv4, a2))
	}
}

// TestNotracked: both hooks, before conntrack, every address.
func TestNotracked(t *testing.T) {
	tbl := &nftables.Table{Name: "raw", Family: inet}
	mk := func(hook string, prio nftables.ChainPriority, exprs ...[]expr.Any) chain {
		ch := chain{c: &nftables.Chain{Name: hook, Table: tbl, Priority: &prio}, hook: hook}
		for _, e := range exprs {
			ch.rules = append(ch.rules, parseRule(inet, e, nil))
		}
		return ch
	}
	both := [][]expr.Any{notrackRule(a1, 12), notrackRule(a2, 16)}
	addrs := []netip.Addr{a1, a2}
	for _, tc := range []struct {
		name   string
		chains []chain
		want   bool
	}{
		{"both hooks", []chain{mk("prerouting", -300, both...), mk("output", -300, both...)}, true},
		{"prerouting only", []chain{mk("prerouting", -300, both...)}, false},
		{"after conntrack", []chain{mk("prerouting", -300, both...), mk("output", 0, both...)}, false},
		{"one address", []chain{mk("prerouting", -300, both[0]), mk("output", -300, both...)}, false},
	} {
		if got := notracked(tc.chains, addrs); got != tc.want {
			t.Errorf("%s: notracked %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestKeyNames: the name tables are in the kernel's order.
func TestKeyNames(t *testing.T) {
	for got, want := range map[string]string{
		metaName(expr.MetaKeyLEN): "length", metaName(expr.MetaKeyL4PROTO): "l4proto", metaName(expr.MetaKeyPRANDOM): "random",
		ctName(expr.CtKeySTATE): "state", ctName(expr.CtKeyLABELS): "label", ctName(expr.CtKeyEVENTMASK): "event",
		familyName(nftables.TableFamilyINet): "inet", familyName(nftables.TableFamilyNetdev): "netdev", familyName(nftables.TableFamilyIPv6): "ip6",
		metaName(99): "key 99", familyName(4): "family 4",
	} {
		if got != want {
			t.Errorf("%q, want %q", got, want)
		}
	}
}

// TestPathRules: a drop policy, a drop for the run's prefix in a chain
// jumped to, not a drop for other addresses nor one in a chain off the
// path (a hook the traffic does not take, a netdev chain on another
// device).
func TestPathRules(t *testing.T) {
	tbl := &nftables.Table{Name: "filter", Family: inet}
	nd := &nftables.Table{Name: "nd", Family: nftables.TableFamilyNetdev}
	drop := nftables.ChainPolicyDrop
	mk := func(tb *nftables.Table, name, hook string, h *nftables.ChainHook, exprs ...[]expr.Any) chain {
		ch := chain{c: &nftables.Chain{Name: name, Table: tb, Hooknum: h}, hook: hook}
		for _, e := range exprs {
			ch.rules = append(ch.rules, parseRule(tb.Family, e, nil))
		}
		return ch
	}
	input := mk(tbl, "input", "input", nftables.ChainHookInput, []expr.Any{&expr.Verdict{Kind: expr.VerdictJump, Chain: "sub"}})
	input.c.Policy = &drop
	sub := mk(tbl, "sub", "", nil,
		saddrPrefix(netip.MustParsePrefix("198.18.0.0/15"), &expr.Verdict{Kind: expr.VerdictDrop}),
		saddrPrefix(netip.MustParsePrefix("10.0.0.0/8"), &expr.Verdict{Kind: expr.VerdictDrop}))
	unused := mk(tbl, "unused", "", nil, []expr.Any{&expr.Reject{}})
	other := mk(nd, "in", "ingress", nftables.ChainHookIngress, []expr.Any{&expr.Verdict{Kind: expr.VerdictDrop}})
	other.c.Device = "eth9"
	f := &Firewall{iface: "lrb"}
	got := f.pathRules([]chain{input, sub, unused, other}, []netip.Addr{a1, a2})
	want := []string{"inet filter/input: policy drop (hook input)", "inet filter/sub: meta nfproto ipv4 ip saddr 198.18.0.0/15 drop"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("path rules %q, want %q", got, want)
	}
}
