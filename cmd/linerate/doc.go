// Linerate is the line-rate benchmarking suite: one binary whose
// subcommands tune hosts, generate and count traffic, and report.
//
//	agent              the daemon on each host under test (package agent)
//	members, run       the cluster's agents; one run over them (package coordinator)
//	campaign run       sweeps and throughput searches (coordinator/campaign)
//	results, report    stored result documents, compared and rendered
//	lab run|up|down    the one-machine testbed of namespaces (cmd/linerate/internal/lab)
//	lab campaign       a campaign against a lab
//	send, recv         one sender or receiver on this host (pktgen, receiver)
//	pktgen             parse, probe and reset the kernel's pktgen
//	irq                show, plan, apply, restore and verify queue IRQ pins,
//	                   and snapshot what they read (package topology)
//	certs              the mutual-TLS certificate directory (internal/cluster/mtls)
//
// This package holds flags and wiring only: each command parses its flags
// into a package's options, calls it, and prints what it returns with
// that package's own rendering. The host is read through topology's root
// (--root for a fixture or a snapshot) by the packages, never here; a
// send is composed by the agent's code (agent.LocalSend), a receiver
// counts in its own loop (receiver.Count). TestThin (thin_test.go) holds
// every non-test file to it: no rendering or host-reading imports, no
// call that reads the host, plans threads or rates, and no host path.
package main
