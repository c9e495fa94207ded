// Package pktgentest is the generator tests' test bed: namespaces joined by
// a veth (internal/netns/nstest) and a Sink, a test-only receiver: an XDP
// program on the receiving interface that records, for every stream
// (thread) and every sequence number, how often it arrived and the UDP
// and pktgen headers of its last copy, then drops the frame. It counts at
// XDP speed, so a test can check every frame of a multi-Mpps run.
//
// Linux only: elsewhere the package is empty.
package pktgentest
