// Package nft reads and changes the host network namespace's nftables
// ruleset over netlink for doctor: what tracks or touches the test traffic,
// linerate's NOTRACK table, and its restore.
//
// It talks netlink (google/nftables) rather than running `nft -j`: an
// agent needs no nft binary, reads the namespace its socket was opened in,
// and changes the ruleset in one kernel transaction. Rules are judged from
// their expressions, and shown in nft's words as far as the package knows
// them:
//   - a rule tracks when it uses conntrack (ct, nat, masquerade, redirect,
//     an iptables-nft conntrack match or CT target), and so does a nat
//     chain: loading one makes the kernel track every packet of its family
//     in the namespace, whichever chain it sits in;
//   - a notrack rule covers an address when it runs before conntrack
//     (priority below -200) and matches nothing but the protocol family and
//     addresses (ip/ip6 saddr or daddr against a value, prefix, range or
//     set), each of which admits the address; a rule without an address
//     match covers every address of its family;
//   - a rule is on the test traffic's path when it sits in a base chain at
//     a routed hook (or a netdev chain on the interface) or a chain one of
//     those jumps to, and its address matches admit one of the run's
//     addresses.
//
// AddNotrack checks that table inet linerate is absent, then creates it
// in a second netlink transaction with NLM_F_EXCL (CreateTable): a table
// someone creates between the two fails the transaction (EEXIST) rather
// than being taken over. The race left is the journal's: the fix journaled
// the table absent before it wrote, and a restore of a setting with no
// applied value puts the original back whatever it finds, so it would
// delete the other's table. The window is one netlink round trip, and only
// another linerate fix or an operator's nft racing the same --fix hits it.
//
// iptables-legacy rules live outside nftables and are not read here;
// doctor flags their tables from /proc/net/ip_tables_names.
package nft
