// Package live assembles a doctor.Host for the live host: its root, ethtool,
// nftables, adjtimex and xdp-features.
package live
