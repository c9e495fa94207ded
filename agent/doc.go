// Package agent is the daemon that runs on each host under test (`linerate
// agent`): it inspects its NIC, restores the tuning of a crashed run, serves
// the Agent gRPC service (mutual TLS, one coordinator at a time under a
// lease) and announces itself over serf with compact tags.
//
// Lifecycle: [New] checks the [Config]; [Agent.Start] refuses a sender on a
// management interface, inspects the NIC, restores the journal a crashed
// run of its own left (other owners' journals are left alone), serves metrics and gRPC with health, and joins serf;
// [Agent.Shutdown] reports NOT_SERVING, stops sending, disarms, restores the
// tuning, leaves serf and stops gRPC.
//
// The work is split by concern, each part a type without proto in it:
//
//	inventory.go  the NIC, backends and receiver methods the host offers (Describe)
//	lease.go      the lease: one coordinator at a time, TTL clamped, expiry
//	tuning.go     IRQ pinning through topology, restored from its own journal
//	preflight.go  the host's checks (doctor) at Describe, the fixes at Tune
//	receive.go    the receiver: arm (within its memory budget), collect, disarm
//	send.go       the sender: configure, schedule, start, stop, result
//	watchdog.go   every send's deadline, and a stopped backend given up
//	rtt.go        a send's round trips: its latency stream and the
//	              receiver that counts and times the reflections
//	configure.go  a send's configuration checked and its backend chosen
//	compose.go    how every send is composed: the host's defaults, the thread
//	              slots (pktgen.Slots), the MTU, the backend; also for
//	localsend.go  `linerate send`, a send on this host without a coordinator
//	safety.go     the safety rails: destinations only the cluster's receivers
//	              announce (or --allow-dst), never the management interface
//	watch.go      the live samples of the Watch stream
//	phase.go      the sender's and receiver's phases
//	service.go    the operations a coordinator calls, put together from the parts
//	errors.go     the kinds of failure every operation returns
//
// The proto edge: grpc.go holds the thin handlers (decode, call, encode),
// the convert*.go files map the messages to and from the Go types of
// pktgen, receiver and topology and the agent's own (convert.go: sends,
// reports, the NIC, samples; convert_answers.go and convert_lease.go: the
// calls' answers; convert_clock.go, convert_irqverify.go), and
// grpc_errors.go maps each kind of failure to a status code. bounds.go
// reads the raw requests, to bound them before a handler decodes them
// (a send's length it derives from the configuration decoded as
// Configure decodes it). serf.go announces the agent (gossip.Tags),
// metrics.go serves Prometheus metrics, netos.go reads the host's interfaces,
// default routes (netlink) and driver facts (ethtool).
//
// Privileges: pinning IRQs needs root; the kernel pktgen backend needs the
// pktgen module loaded (the agent does not load it) and CAP_NET_ADMIN in
// the initial user namespace; the XDP receiver and sender need CAP_BPF and
// CAP_NET_ADMIN, the AF_PACKET ones CAP_NET_RAW. Describe lists only the
// backends the host can run now.
package agent
