// Package nft reads and changes the host network namespace's nftables
// ruleset over netlink for doctor: what tracks or touches the test traffic,
// linerate's NOTRACK table, and its restore.
package nft
