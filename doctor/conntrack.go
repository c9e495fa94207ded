package doctor

import (
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// Where the check reads whether conntrack is there and how much it holds
// (the count is the reading process's network namespace's).
const (
	conntrackCount  = "/proc/sys/net/netfilter/nf_conntrack_count"
	conntrackModule = "/sys/module/nf_conntrack"
)

// legacyTables are iptables-legacy's lists of loaded tables: the check
// reads nftables only, so legacy rules are flagged, not judged.
var legacyTables = []string{"/proc/net/ip_tables_names", "/proc/net/ip6_tables_names"}

const conntrackWhy = "Conntrack looks up, and for each new flow creates, an entry for every packet the test sends and receives: " +
	"that costs CPU per packet at small frames, and a full table drops packets (\"nf_conntrack: table full\") — loss a switch would be blamed for."

func checkConntrack(e *env) Check {
	c := Check{Title: "conntrack tracking the test traffic", Why: conntrackWhy}
	loaded, count, ev := e.conntrack()
	c.Evidence = ev
	legacy := e.legacyTables()
	c.Evidence = append(c.Evidence, legacy...)
	if !loaded {
		c.Status = Pass
		c.Evidence = append(c.Evidence, "nf_conntrack is not loaded: no packet is tracked")
		return c
	}
	st, err := e.firewall()
	if err != nil {
		c.Status = Warn
		lead(&c, err.Error())
		c.Fix = "read the ruleset yourself (nft list ruleset) and, if a rule uses ct or nat, add NOTRACK for the test addresses: " + notrackCommand(e)
		return c
	}
	c.Evidence = append(c.Evidence, "nftables tables: "+orNone(st.Tables))
	for _, r := range st.Tracking {
		c.Evidence = append(c.Evidence, "nftables rule that makes the kernel track: "+r)
	}
	cover := "for every address (no run addresses given)"
	if len(e.addrs) > 0 {
		cover = "for " + addrList(e.addrs)
	}
	if st.Notracked {
		c.Status = Pass
		c.Evidence = append(c.Evidence, "nftables: notrack rules before conntrack at prerouting and output "+cover)
		return c
	}
	c.Evidence = append(c.Evidence, "nftables: no notrack rule before conntrack at both prerouting and output "+cover)
	switch {
	case len(st.Tracking) > 0:
		c.Status = Fail
		what := "the test traffic"
		if len(e.addrs) > 0 {
			what = addrList(e.addrs)
		}
		more := ""
		if n := len(st.Tracking) - 1; n > 0 {
			more = fmt.Sprintf(" (and %d rule(s) more)", n)
		}
		lead(&c, fmt.Sprintf("%s tracks %s%s, with no notrack rule before conntrack", st.Tracking[0], what, more))
	case count > 0:
		// No nftables rule tracks, yet the table holds entries: something
		// the check does not read (iptables-legacy, a helper, OVS) does.
		c.Status = Warn
		lead(&c, fmt.Sprintf("%s: %d connections tracked with no nftables rule using conntrack: something else (iptables-legacy, openvswitch, a helper) tracks", conntrackCount, count))
	case len(legacy) > 0:
		c.Status = Warn
		lead(&c, "iptables-legacy tables are loaded and not read by this check: their rules may track (-m state, -m conntrack, -t nat)")
		c.Fix = "check iptables-legacy-save for state, conntrack and nat rules; if there are any: " + notrackCommand(e)
		return c
	default:
		c.Status = Pass
		c.Evidence = append(c.Evidence, "no nftables rule uses conntrack: the kernel does not track packets in this network namespace")
		return c
	}
	c.Fix = notrackCommand(e)
	if len(e.addrs) > 0 {
		c.FixClass = FixNotrack
	}
	return c
}

// conntrack reads whether nf_conntrack is loaded and how many connections
// it tracks (-1 when the count cannot be read).
func (e *env) conntrack() (loaded bool, count int, ev []string) {
	count = -1
	s, err := e.read(conntrackCount)
	switch {
	case err == nil:
		loaded = true
		ev = append(ev, conntrackCount+": "+s)
		if n, err := strconv.Atoi(s); err == nil {
			count = n
		}
	default:
		ev = append(ev, fmt.Sprintf("%s: not readable (%v)", conntrackCount, err))
	}
	if _, err := e.h.Root.Stat(conntrackModule); err == nil {
		loaded = true
		ev = append(ev, conntrackModule+": present (nf_conntrack loaded or built in)")
	} else {
		ev = append(ev, fmt.Sprintf("%s: absent (%v)", conntrackModule, err))
	}
	return loaded, count, ev
}

// legacyTables names the iptables-legacy tables loaded (evidence), empty
// when there are none.
func (e *env) legacyTables() []string {
	var out []string
	for _, name := range legacyTables {
		s, err := e.read(name)
		if err != nil || s == "" {
			continue
		}
		out = append(out, fmt.Sprintf("%s: %s (iptables-legacy rules are not read)", name, strings.Join(strings.Fields(s), ", ")))
	}
	return out
}

// firewall reads the ruleset for the run's addresses once per env.
func (e *env) firewall() (FirewallState, error) {
	if e.fw != nil {
		return *e.fw, e.fwErr
	}
	e.fw = &FirewallState{}
	if e.h.Firewall == nil {
		e.fwErr = errors.New("nftables: the ruleset cannot be read on this host root (a snapshot or fixture)")
		return *e.fw, e.fwErr
	}
	st, err := e.h.Firewall.Inspect(e.addrs)
	if err != nil {
		e.fwErr = fmt.Errorf("nftables: the ruleset cannot be read: %w", err)
		return *e.fw, e.fwErr
	}
	*e.fw = st
	return st, nil
}

// notrackCommand is the fix: one nft transaction adding linerate's
// NOTRACK table, as --fix notrack does. Without the run's addresses it
// untracks everything on the interface.
func notrackCommand(e *env) string {
	cmds := []string{
		"add table inet linerate",
		"add chain inet linerate prerouting { type filter hook prerouting priority raw; }",
		"add chain inet linerate output { type filter hook output priority raw; }",
	}
	if len(e.addrs) == 0 {
		cmds = append(cmds,
			fmt.Sprintf("add rule inet linerate prerouting iifname %q notrack", e.o.Iface),
			fmt.Sprintf("add rule inet linerate output oifname %q notrack", e.o.Iface))
	}
	for _, chain := range []string{"prerouting", "output"} {
		for _, a := range e.addrs {
			ip := "ip"
			if a.Is6() {
				ip = "ip6"
			}
			for _, dir := range []string{"saddr", "daddr"} {
				cmds = append(cmds, fmt.Sprintf("add rule inet linerate %s %s %s %s notrack", chain, ip, dir, a))
			}
		}
	}
	return "nft '" + strings.Join(cmds, "; ") + "'"
}

// fixNotrack adds linerate's NOTRACK table for the run's addresses when
// the check would fail, journaled (the table did not exist) before it is
// created. An existing table of that name is refused and left alone.
func fixNotrack(e *env, j *journaler) error {
	// Nothing to untrack is no fix to refuse: an interface without an
	// address must not fail --fix (and stop the fixes after this one) on
	// a host where nothing tracks.
	loaded, count, _ := e.conntrack()
	if !loaded {
		return nil
	}
	st, err := e.firewall()
	if err != nil {
		return err
	}
	if st.Notracked || (len(st.Tracking) == 0 && count <= 0) {
		return nil
	}
	if len(e.addrs) == 0 {
		return errors.New("notrack needs the run's test addresses (none given)")
	}
	fw := e.h.Firewall
	s := fw.NotrackSetting()
	r := fw.Restorer()
	if cur, err := r.Current(s); err != nil {
		return fmt.Errorf("read nftables table %s: %w", s.Key, err)
	} else if cur != s.Original {
		return fmt.Errorf("nftables table %s already exists and does not cover %s: it is left alone; if no linerate run is using it, delete it (nft delete table %s) or restore a journaled one (linerate doctor --restore --iface %s)",
			s.Key, addrList(e.addrs), s.Key, e.o.Iface)
	}
	return j.change(s, func() error { return fw.AddNotrack(e.addrs) }, func() (string, error) { return r.Current(s) })
}

func addrList(as []netip.Addr) string {
	s := make([]string, len(as))
	for i, a := range as {
		s[i] = a.String()
	}
	return strings.Join(s, ", ")
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}
