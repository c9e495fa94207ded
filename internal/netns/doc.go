// Package netns makes network namespaces joined by veth pairs, for the
// lab and for tests: real kernels, real links, no hardware. Addresses come
// from 198.18.0.0/15 (RFC 2544's benchmarking range) and 2001:2::/48 (RFC
// 5180's) only. Every namespace made here is named "lr-…" (/run/netns/lr-…)
// and removed by Close; Do runs a function on a locked OS thread inside
// one. IPv6 is on, quiet (QuietIPv6): no link-local address, no DAD, no
// router solicitation.
//
// Privileges: root (CAP_SYS_ADMIN and CAP_NET_ADMIN); the kernel needs
// veth. Linux only: elsewhere the package is empty.
package netns
