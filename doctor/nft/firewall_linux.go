package nft

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/google/nftables"

	"github.com/linerate/linerate/doctor"
)

// conntrackPriority is the priority of conntrack's own hook
// (NF_IP_PRI_CONNTRACK): a notrack rule must run before it.
const conntrackPriority = -200

// Firewall is the nftables ruleset of the network namespace it was opened
// in, over one netlink socket (doctor.Firewall).
type Firewall struct {
	c *nftables.Conn
	// iface narrows netdev chains to the test interface's; "" reads every
	// netdev chain.
	iface string
}

var _ doctor.Firewall = (*Firewall)(nil)

// Open opens the ruleset of the calling thread's network namespace: the
// socket stays bound to it, so a caller in another namespace (netns.NS.Do)
// can use the Firewall after it returns. iface is the test interface
// (netdev chains on other devices are not on its path).
func Open(iface string) (*Firewall, error) {
	c, err := nftables.New(nftables.AsLasting())
	if err != nil {
		return nil, fmt.Errorf("nftables: open a netlink socket: %w", err)
	}
	return &Firewall{c: c, iface: iface}, nil
}

// Close closes the socket.
func (f *Firewall) Close() error {
	if err := f.c.CloseLasting(); err != nil {
		return fmt.Errorf("nftables: close: %w", err)
	}
	return nil
}

// pathHooks are the hooks routed test traffic passes, by name.
var pathHooks = map[nftables.ChainHook]string{
	*nftables.ChainHookPrerouting:  "prerouting",
	*nftables.ChainHookInput:       "input",
	*nftables.ChainHookForward:     "forward",
	*nftables.ChainHookOutput:      "output",
	*nftables.ChainHookPostrouting: "postrouting",
}

// chain is one chain with its rules read and judged.
type chain struct {
	c     *nftables.Chain
	hook  string // "" for a regular chain
	rules []rule
}

func (ch chain) where() string {
	return fmt.Sprintf("%s %s/%s", familyName(ch.c.Table.Family), ch.c.Table.Name, ch.c.Name)
}

// Inspect reads every table, chain and rule and judges them against the
// run's addresses:
//   - Tracking: every rule in an ip, ip6 or inet table that uses
//     conntrack (ct, nat, masquerade, xt conntrack) and every nat chain,
//     in a family that carries one of addrs: loading such a rule makes the
//     kernel track every packet of that family in the namespace, whichever
//     chain it sits in.
//   - Notracked: at both prerouting and output, for each address, a rule
//     with notrack in a base chain of priority below conntrack's (-200)
//     covers it. A rule covers an address when it matches nothing but the
//     protocol family and addresses (ip/ip6 saddr or daddr against a
//     value, prefix, range or set), each of which admits the address; a
//     rule without an address match covers every address of its family.
//     With no addrs, a notrack rule must cover all IPv4 traffic.
//   - PathRules: rules that drop, reject, queue or rewrite, and drop
//     policies, in base chains at the routed hooks (and netdev chains on
//     the interface) and the chains they jump to, unless their address
//     matches admit none of addrs.
func (f *Firewall) Inspect(addrs []netip.Addr) (doctor.FirewallState, error) {
	var st doctor.FirewallState
	chains, err := f.read()
	if err != nil {
		return st, err
	}
	tables, err := f.c.ListTables()
	if err != nil {
		return st, fmt.Errorf("nftables: list tables: %w", err)
	}
	for _, t := range tables {
		st.Tables = append(st.Tables, familyName(t.Family)+" "+t.Name)
	}
	slices.Sort(st.Tables)

	for _, ch := range chains {
		if !carries(ch.c.Table.Family, addrs) {
			continue
		}
		if ch.c.Type == nftables.ChainTypeNAT && ch.hook != "" {
			st.Tracking = append(st.Tracking, fmt.Sprintf("%s: nat chain (hook %s)", ch.where(), ch.hook))
		}
		for _, r := range ch.rules {
			if r.tracks {
				st.Tracking = append(st.Tracking, ch.where()+": "+r.text)
			}
		}
	}
	st.Notracked = notracked(chains, addrs)
	st.PathRules = f.pathRules(chains, addrs)
	return st, nil
}

// carries is true when a table of family fam sees packets of one of addrs
// (with no addrs, IPv4).
func carries(fam nftables.TableFamily, addrs []netip.Addr) bool {
	if len(addrs) == 0 {
		addrs = []netip.Addr{netip.IPv4Unspecified()}
	}
	for _, a := range addrs {
		switch fam {
		case nftables.TableFamilyINet:
			return true
		case nftables.TableFamilyIPv4:
			if a.Is4() {
				return true
			}
		case nftables.TableFamilyIPv6:
			if a.Is6() {
				return true
			}
		}
	}
	return false
}

// notracked is true when at prerouting and at output every address is
// covered by a notrack rule that runs before conntrack.
func notracked(chains []chain, addrs []netip.Addr) bool {
	for _, hook := range []string{"prerouting", "output"} {
		covered := func(a netip.Addr, all bool) bool {
			for _, ch := range chains {
				fam := ch.c.Table.Family
				if ch.hook != hook || ch.c.Priority == nil || *ch.c.Priority >= conntrackPriority || !carries(fam, []netip.Addr{a}) {
					continue
				}
				for _, r := range ch.rules {
					if r.notrack && r.covers(fam, a) && (!all || len(r.addrs) == 0) {
						return true
					}
				}
			}
			return false
		}
		if len(addrs) == 0 {
			if !covered(netip.IPv4Unspecified(), true) {
				return false
			}
			continue
		}
		for _, a := range addrs {
			if !covered(a, false) {
				return false
			}
		}
	}
	return true
}

// pathRules lists what can drop or rewrite the test traffic.
func (f *Firewall) pathRules(chains []chain, addrs []netip.Addr) []string {
	byName := map[string]chain{}
	for _, ch := range chains {
		byName[ch.c.Table.Name+"\x00"+fmt.Sprint(ch.c.Table.Family)+"\x00"+ch.c.Name] = ch
	}
	var out []string
	seen := map[string]bool{}
	var walk func(ch chain)
	walk = func(ch chain) {
		key := ch.where()
		if seen[key] {
			return
		}
		seen[key] = true
		fam := ch.c.Table.Family
		for _, r := range ch.rules {
			if !r.touches(fam, addrs) {
				continue
			}
			if len(r.acts) > 0 {
				out = append(out, ch.where()+": "+r.text)
			}
			for _, j := range r.jumps {
				if next, ok := byName[ch.c.Table.Name+"\x00"+fmt.Sprint(fam)+"\x00"+j]; ok {
					walk(next)
				}
			}
		}
	}
	for _, ch := range chains {
		if ch.hook == "" || !onPath(ch, addrs, f.iface) {
			continue
		}
		if ch.c.Policy != nil && *ch.c.Policy == nftables.ChainPolicyDrop {
			out = append(out, fmt.Sprintf("%s: policy drop (hook %s)", ch.where(), ch.hook))
		}
		walk(ch)
	}
	return out
}

// onPath is true for a base chain the test traffic passes: a routed hook
// in a family that carries the addresses, or a netdev chain on the
// interface. google/nftables v0.3.0 does not decode a chain's device, so
// a netdev chain whose device is not known counts as on the path.
func onPath(ch chain, addrs []netip.Addr, iface string) bool {
	switch ch.c.Table.Family {
	case nftables.TableFamilyNetdev:
		return iface == "" || ch.c.Device == "" || ch.c.Device == iface
	case nftables.TableFamilyINet, nftables.TableFamilyIPv4, nftables.TableFamilyIPv6:
		_, routed := pathHooks[*ch.c.Hooknum]
		return routed && carries(ch.c.Table.Family, addrs)
	}
	return false
}

// read lists every chain with its rules parsed.
func (f *Firewall) read() ([]chain, error) {
	cs, err := f.c.ListChains()
	if err != nil {
		return nil, fmt.Errorf("nftables: list chains: %w", err)
	}
	var out []chain
	for _, c := range cs {
		ch := chain{c: c}
		if c.Hooknum != nil {
			ch.hook = hookName(c.Table.Family, *c.Hooknum)
		}
		rs, err := f.c.GetRules(c.Table, c)
		if err != nil {
			return nil, fmt.Errorf("nftables: list rules of %s: %w", ch.where(), err)
		}
		sets := f.sets(c.Table)
		for _, r := range rs {
			ch.rules = append(ch.rules, parseRule(c.Table.Family, r.Exprs, sets))
		}
		out = append(out, ch)
	}
	return out, nil
}

// sets reads a table's sets by name, each once.
func (f *Firewall) sets(t *nftables.Table) setReader {
	type entry struct {
		s   *nftables.Set
		els []nftables.SetElement
		err error
	}
	cache := map[string]entry{}
	return func(name string) (*nftables.Set, []nftables.SetElement, error) {
		if e, ok := cache[name]; ok {
			return e.s, e.els, e.err
		}
		var e entry
		e.s, e.err = f.c.GetSetByName(t, name)
		if e.err == nil && e.s == nil {
			e.err = errors.New("no such set")
		}
		if e.err == nil {
			e.els, e.err = f.c.GetSetElements(e.s)
		}
		cache[name] = e
		return e.s, e.els, e.err
	}
}

func hookName(fam nftables.TableFamily, h nftables.ChainHook) string {
	if fam == nftables.TableFamilyNetdev {
		switch h {
		case *nftables.ChainHookIngress:
			return "ingress"
		case *nftables.ChainHookEgress:
			return "egress"
		}
	}
	if n, ok := pathHooks[h]; ok {
		return n
	}
	return fmt.Sprintf("hook %d", h)
}

// families are nft's names of the table families, indexed by their
// NFPROTO_* numbers ("-" where there is none).
var families = strings.Fields("unspec inet ip arp - netdev - bridge - - ip6")

func familyName(f nftables.TableFamily) string {
	if int(f) < len(families) && families[f] != "-" {
		return families[f]
	}
	return fmt.Sprintf("family %d", f)
}
