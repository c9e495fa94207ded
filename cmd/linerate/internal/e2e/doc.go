// Package e2e holds linerate's end-to-end and reliability tests: they run
// the built binary — `lab run`, `lab campaign`, `lab up`, `send`, `recv`,
// `run`, agents in a lab's namespaces or in qemu guests — and drive live
// agents over gRPC, from outside the binary as an operator does; and
// they install what `make package` builds in a Debian chroot and check
// the agent's systemd unit (systemd-analyze, its capabilities applied to
// a lab's agents). Every test is built with the traffic tag and, but for
// the unit's file checks, needs root (`make traffic` runs them, `make
// reliability` the TestReliability* ones at full size).
//
// The package's own code is their harness: [Binary] builds the binary once
// per test process and every test shares it, [Main] removes it when the
// tests end, and [BadCommands] are the command lines the binary refuses,
// checked in-process by cmd/linerate's tests and against the real binary
// and host by TestReliabilityBadInput. Tests of other packages that run
// the binary (the lab's session, the guests of vmtest) take it from
// [Binary] too.
package e2e
