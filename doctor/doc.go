// Package doctor checks a host's fitness for a line-rate benchmark and
// fixes what an operator allows. Each check (irqbalance, steering,
// governor, idle states, SMT, NUMA, flow control, coalescing, rings,
// offloads, link, MTU, conntrack, firewall, kernel features, clock) reads
// its evidence (files through a topology.Root, the NIC through ethtool,
// the ruleset through nftables), says PASS, WARN or FAIL, why it matters
// for a benchmark, and the exact fix. Fix applies the allowed classes of
// fixes, each journaled in the interface's topology journal before it is
// written, so that every path that restores IRQ affinities puts the
// originals back too (Restorers).
package doctor
