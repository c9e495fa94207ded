// Package live assembles a doctor.Host for the live host: its root, ethtool,
// nftables, adjtimex and xdp-features.
//
//	live.go        Host: the root and the readers of the live kernel
//	clock.go       Synced, the kernel's own verdict on adjtimex's answer
//	clock_linux.go ReadClock: adjtimex with modes 0 (nothing is changed)
//	clock_other.go ReadClock off Linux: an error naming the system
//	addrs_linux.go the interface's addresses over netlink (addrs_other.go: none)
package live
