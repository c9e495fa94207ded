// Package coordinator discovers agents over serf, drives the chosen ones
// through a run over gRPC, and reconciles what every sender sent with
// what every receiver counted, flow by flow and stream by stream.
//
// A run (Runner.Run) is a sequence of phases, each a method of runState
// in a file of its own; run.go reads the sequence top to bottom:
//
//	run.go        Runner, the phase names and the phase sequence
//	state.go      the run in progress: its nodes, failures, fan-out over nodes
//	discover.go   discover (members alive with a fitting role, dialled), describe
//	lease.go      acquire and renew the agents' leases
//	preflight.go  the hosts' checks before any lease (Spec.Preflight: warn, strict,
//	              fix), the fix classes for Tune, the volatile checks read again
//	tune.go       pin the NIC queue IRQs (unless told not to)
//	arm.go        arm the receivers, sized from the plan (and the budget
//	              checked before leases)
//	configure.go  plan each sender's threads over its flows and configure it
//	start.go      one start instant for every sender (StartAt)
//	watch.go      live counters from every agent while it runs
//	collect.go    wait for the senders' results, stop them, collect the receivers
//	assemble.go   reconcile the flows into the Result, and its status
//	cleanup.go    stop, restore and release every leased agent, whatever happened
//
// The logic in it is pure and tested on its own, without agents or RPC:
//
//	threads.go    where a sender's threads run and what each sends
//	skew.go       the start lead, start skew and its percentiles
//	match.go      a run's streams matched to its flows, host drops shared out
//	reconcile.go  one flow balanced (Reconcile): loss attributed to sender
//	              host, receiver host and network; Stream and Flow
//	pattern.go    which senders feed which receivers (pairwise, fan-in, …)
//	direction.go  pairs turned round (--bidir, --reverse), each host's role
//	              in the run, each direction's totals
//	sizing.go     each receiver's stream table and per-stream sequence
//	              capacity from the plan, its memory against the budget
//	spec.go       a run's Spec, its defaults and validation
//	rtt.go        the latency mode, the latency streams' ports and a
//	              flow's round trips (RTT)
//
// convert.go (with convert_lease.go) is the proto edge: every Agent
// service message the run reads becomes a type of the project there (a
// receiver's report is a receiver.Report, a sender's a pktgen.Summary:
// reports.go), and the sender's configuration is composed there; the
// phases write only requests of scalars (a lease id, a TTL, a size) and
// hand every answer to it. result.go is what a run returns (Result, Host);
// truth.go the path's own counts a run is checked against (PathTruth);
// events.go the live events of `--json-stream`. cluster.go is the
// coordinator's serf membership (tags read through gossip.DecodeTags),
// join.go its join, retried with the agents' backoff within a deadline,
// dial.go its mutual-TLS dialer and health check.
//
// Subpackages: campaign runs campaigns (sweeps and searches, one run per
// trial), search holds the throughput searches, results stores and
// compares result documents, report renders them.
package coordinator
