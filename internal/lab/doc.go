// Package lab builds linerate's one-machine testbed: hosts made of network
// namespaces, joined through veth pairs to a "switch" namespace, with
// programs on the switch ports that pass traffic or lose a known part of
// it and count what they dropped — a lossy switch whose own counter is the
// truth. Addresses come from 198.18.0.0/15 only.
package lab
