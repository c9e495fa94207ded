package doctor

import (
	"fmt"
	"strings"
)

const firewallWhy = "A rule that drops, rejects, queues or rewrites the test traffic on its path makes the firewall, not the switch, " +
	"decide what arrives: its drops count as loss, a queue or a rewrite costs CPU per packet."

func checkFirewall(e *env) Check {
	c := Check{Title: "firewall rules on the test traffic's path", Why: firewallWhy}
	legacy := e.legacyTables()
	st, err := e.firewall()
	if err != nil {
		c.Status = Warn
		c.Evidence = append([]string{err.Error()}, legacy...)
		c.Fix = "read the ruleset yourself: nft list ruleset"
		return c
	}
	c.Evidence = append(c.Evidence, "nftables tables: "+orNone(st.Tables))
	c.Evidence = append(c.Evidence, legacy...)
	on := "at prerouting, input, forward, output, postrouting"
	if e.o.Iface != "" {
		on += " or netdev ingress/egress of " + e.o.Iface
	}
	if len(e.addrs) > 0 {
		on += " for " + addrList(e.addrs)
	}
	if len(st.PathRules) == 0 {
		c.Status = Pass
		c.Evidence = append(c.Evidence, "nftables: no rule or drop policy "+on+" drops, rejects, queues or rewrites")
		return c
	}
	c.Status = Warn
	chains := map[string]bool{}
	var list, rules []string
	for _, r := range st.PathRules {
		rules = append(rules, "nftables rule on the path ("+on+"): "+r)
		// "family table/chain: rule" → "nft -a list chain family table chain".
		where, _, _ := strings.Cut(r, ": ")
		fam, tc, _ := strings.Cut(where, " ")
		table, chain, _ := strings.Cut(tc, "/")
		if !chains[where] {
			chains[where] = true
			list = append(list, fmt.Sprintf("nft -a list chain %s %s %s", fam, table, chain))
		}
	}
	// The rules lead the evidence: the report shows a WARN's first item.
	c.Evidence = append(rules, c.Evidence...)
	c.Fix = "make these rules skip the test addresses (accept them earlier in the chain) or remove them: " +
		strings.Join(list, "; ") + " shows each rule's handle; nft delete rule FAMILY TABLE CHAIN handle N removes one"
	return c
}
