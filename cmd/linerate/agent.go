package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/linerate/linerate/agent"
	"github.com/linerate/linerate/doctor"
	"github.com/linerate/linerate/internal/cluster/gossip"
	"github.com/linerate/linerate/internal/cluster/mtls"
	"github.com/linerate/linerate/internal/enum"
	"github.com/linerate/linerate/topology"
)

type agentFlags struct {
	name, role, iface, bind, advertise, grpcAddr, gossipKey, tlsDir, stateDir, root, metrics, allowFixes string
	join, allowDst, allowSrcMAC, allowVLAN, knownChecks                                                  []string
	insecure, insecureGossip, allowMgmtIface, allowDstAny, allowCAKey                                    bool
	shutdownTimeout                                                                                      time.Duration
	receiverMemory                                                                                       uint64
	maxRun                                                                                               time.Duration
}

func (a *app) agentCommand() *cobra.Command {
	f := &agentFlags{receiverMemory: agent.DefaultReceiverMemory}
	cf := &configFile{}
	cmd := &cobra.Command{
		Use:   "agent --role " + enum.Usage(gossip.AgentRoles) + " --iface IF [--join HOST:PORT...] (--tls-dir DIR | --insecure)",
		Short: "Run the agent a coordinator drives on this host (gossip + gRPC)",
		Long: `agent runs on every host under test. It inspects --iface, restores the IRQ
affinities of a crashed run from --state-dir, serves the Agent gRPC service
(mutual TLS with certificates from 'linerate certs'; coordinator certificates
may call everything, another agent's only Describe; plaintext only with
--insecure) and joins the serf cluster with compact tags (role, gRPC address,
iface, NUMA node, queues, link speed, backends, version; a receiver adds its
data addresses and MAC). Gossip is encrypted with the cluster's key
(--gossip-key, default --tls-dir's gossip.key from 'linerate certs init');
without one the agent refuses to start unless --insecure-gossip. --bind and
--grpc without a host listen on the management address: --advertise's host,
else the source address toward the first --join seed, else the default
route's source address.
On SIGTERM or SIGINT it stops sending, disarms, restores the tuning, leaves
the cluster and stops. On SIGHUP it keeps serving and reloads its
certificate, ca.crt and the CA's revocation list (ca.crl) from --tls-dir:
new connections use them and coordinators the list revokes are cut off; a
reload that fails is logged and keeps the previous certificate.

Leases: one coordinator certificate at a time holds the agent; calls from
any other certificate are refused and every state-changing call is logged
as an audit line. 'linerate agent release' force-releases the lease from
this host, through the agent's admin socket in --state-dir.

Every flag can be written in --config (default ` + agentConfig + `, read
when it is there): YAML, the flags' long names as keys ("tls-dir:
/etc/linerate/tls", "join: [h1:7946, h2:7946]"); a flag given on the
command line wins. --print-config prints the effective configuration.

It refuses a --tls-dir that holds ca.key (unless --allow-ca-key, on the CA's
own machine) or whose key is readable by group or others.

Safety rails, on every request: a sender sends only to a data address of an
alive receiver of its own cluster, with that receiver's MAC as dst_mac (both
as the receiver's own Describe over mutual TLS says, not its gossip tags), unless
the whole destination range lies in an --allow-dst CIDR (one shorter than /8,
such as 0.0.0.0/0, only with --allow-dst-any); never to a multicast or
broadcast MAC; with its device's own source MAC (or an --allow-src-mac one)
and a VLAN tag only from --allow-vlan. A request naming another interface
than --iface is refused. A sender refuses to start, and Configure, Start, Arm
and Tune are refused, while --iface carries the default route (IPv4 or IPv6),
one of the agent's gRPC or gossip addresses or the address the request came
in on, unless --allow-mgmt-iface.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return a.agent(cmd.Context(), f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.name, "name", "", "node name (default: the host name); also the certificate name in --tls-dir")
	fl.StringVar(&f.role, "role", "", enum.Or(gossip.AgentRoles))
	fl.StringVar(&f.iface, "iface", "", "data interface the agent owns")
	fl.StringVar(&f.bind, "bind", ":7946", "gossip address:port (no host: the management address, see docs/usage.md; 0.0.0.0:PORT: every address; empty: no gossip, the agent is only reachable by its gRPC address)")
	fl.StringVar(&f.advertise, "advertise", "", "gossip address:port others reach this host on (default: --bind's)")
	fl.StringVar(&f.grpcAddr, "grpc", ":7443", "gRPC listen address:port (no host: the management address; 0.0.0.0:PORT: every address)")
	fl.StringSliceVar(&f.join, "join", nil, "cluster members to join (host:port), repeatable: tried in a random order until one answers; when none does the agent keeps running and retries with backoff (1 s doubling to 30 s, jittered)")
	fl.StringVar(&f.gossipKey, "gossip-key", "", "file holding the base64 gossip encryption key (16, 24 or 32 bytes; default: --tls-dir's "+gossip.KeyFile+", which 'linerate certs init' writes)")
	fl.BoolVar(&f.insecureGossip, "insecure-gossip", false, "gossip in plaintext, without a key (anyone who reaches the gossip port can join the cluster and forge receivers; warned at every start)")
	fl.StringVar(&f.tlsDir, "tls-dir", "", "certificate directory from 'linerate certs'")
	fl.BoolVar(&f.insecure, "insecure", false, "serve gRPC without TLS (anyone who reaches the port can drive the agent)")
	fl.BoolVar(&f.allowCAKey, "allow-ca-key", false, "serve, and ask receivers, even though --tls-dir holds ca.key (only on the machine that issues certificates)")
	fl.StringVar(&f.stateDir, "state-dir", topology.DefaultStateDir, "directory of the tuning journals")
	fl.StringVar(&f.root, "root", "/", "host root for the NIC topology")
	fl.StringSliceVar(&f.allowDst, "allow-dst", nil, "CIDR a sender may also send to (no receiver of the cluster needed, dst_mac any unicast MAC), repeatable")
	fl.BoolVar(&f.allowDstAny, "allow-dst-any", false, "accept an --allow-dst prefix shorter than /8 (0.0.0.0/0, ::/0): a sender may then flood any host there (warned at every start)")
	fl.BoolVar(&f.allowMgmtIface, "allow-mgmt-iface", false, "let the agent send from, count on (XDP) and tune an interface that carries the default route or the gRPC/gossip traffic")
	fl.StringSliceVar(&f.allowSrcMAC, "allow-src-mac", nil, "MAC a sender may put as src_mac besides its device's own (default: only the device's), repeatable")
	fl.StringVar(&f.allowFixes, "allow-fixes", "none", "fix classes a run's --preflight fix may apply on this host, comma-separated: "+enum.Or(doctor.FixClasses)+", all or none (the default: the host's operator opts in; a run leaves a class not allowed unfixed, with a warning naming it)")
	fl.StringArrayVar(&f.knownChecks, "known-check", nil, "CHECK=WHY: a check ("+enum.Or(doctor.IDs())+") whose WARN is known on this host and needs no action, and why; a run's report shows it as KNOWN with why, not as a warning (a FAIL stays a FAIL), repeatable")
	fl.StringSliceVar(&f.allowVLAN, "allow-vlan", nil, "VLAN ids (0-4095) or ranges (100-199) a sender may tag frames with, and a receiver its reflections (default: none, untagged only), repeatable")
	fl.StringVar(&f.metrics, "metrics", "", "serve Prometheus metrics at http://ADDR/metrics (host:port; empty: off)")
	bytesVar(fl, &f.receiverMemory, "receiver-memory", "the receiver's memory budget: streams × (window + their state on every CPU), whichever method (XDP or AF_PACKET) counts; an Arm that needs more is refused, naming the numbers")
	fl.DurationVar(&f.maxRun, "max-run", agent.DefaultMaxRunLength, "the longest send accepted: its duration, or the length its per-thread count and rate derive; a longer one is refused, naming count, rate and the length")
	fl.DurationVar(&f.shutdownTimeout, "shutdown-timeout", 10*time.Second, "how long shutdown may take")
	cf.register(fl, agentConfig, "the agent's flags")
	_ = cmd.MarkFlagRequired("role")
	_ = cmd.MarkFlagRequired("iface")
	a.withConfig(cmd, cf)
	cmd.AddCommand(a.agentReleaseCommand())
	return cmd
}

func (a *app) agent(ctx context.Context, f *agentFlags) error {
	// SIGHUP is the agent's own (a certificate reload), not a stop:
	// claimed before anything starts.
	hup := hangups(ctx)
	if f.insecure == (f.tlsDir != "") {
		return usagef("give exactly one of --tls-dir DIR (certificates from 'linerate certs') and --insecure")
	}
	if f.maxRun <= 0 {
		return usagef("--max-run %s: want a positive duration such as 24h", f.maxRun)
	}
	var key []byte
	if f.bind != "" { // no gossip, no key; none at all is refused by agent.New
		var err error
		if key, err = gossipKey(f.gossipKey, f.tlsDir, f.insecureGossip); err != nil {
			return err
		}
	}
	allow, err := parseCIDRs(f.allowDst)
	if err != nil {
		return usagef("--allow-dst: %v", err)
	}
	srcMACs, err := parseMACs(f.allowSrcMAC)
	if err != nil {
		return usagef("--allow-src-mac: %v", err)
	}
	vlans, err := parseVLANs(f.allowVLAN)
	if err != nil {
		return usagef("--allow-vlan: %v", err)
	}
	fixes, err := doctor.ParseFixClasses(f.allowFixes)
	if err != nil {
		return usagef("--allow-fixes %s: %v (or all, or none)", f.allowFixes, err)
	}
	known, err := parseKnownChecks(f.knownChecks)
	if err != nil {
		return usagef("--known-check %v", err)
	}
	ag, err := agent.New(agent.Config{
		Name: f.name, Role: agent.Role(f.role), Iface: f.iface, Bind: f.bind, Advertise: f.advertise, GRPCAddr: f.grpcAddr,
		Join: f.join, GossipKey: key, TLSDir: f.tlsDir, InsecureGossip: f.insecureGossip, Insecure: f.insecure, AllowCAKey: f.allowCAKey, StateDir: f.stateDir, Root: f.root,
		AllowDst: allow, AllowDstAny: f.allowDstAny, AllowMgmtIface: f.allowMgmtIface, AllowSrcMACs: srcMACs, AllowVLANs: vlans, AllowFixes: fixes, KnownChecks: known, MetricsAddr: f.metrics, ReceiverMemory: f.receiverMemory,
		MaxRunLength: f.maxRun, Version: version, Logger: a.log.Named("agent"),
	})
	if err != nil {
		return usageError{err}
	}
	if err := ag.Start(ctx); err != nil {
		sctx, cancel := context.WithTimeout(context.Background(), f.shutdownTimeout)
		defer cancel()
		_ = ag.Shutdown(sctx)
		if errors.Is(err, agent.ErrMgmtIface) || errors.Is(err, agent.ErrNoMgmtAddr) || errors.Is(err, mtls.ErrUnsafe) || errors.Is(err, mtls.ErrRevoked) {
			return usageError{err}
		}
		return err
	}
	reloadOnHangup(ctx, a.log, hup, ag.ReloadTLS)
	a.log.Info("signal received: shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), f.shutdownTimeout)
	defer cancel()
	if err := ag.Shutdown(sctx); err != nil {
		return fmt.Errorf("agent shutdown: %w", err)
	}
	return nil
}

// parseCIDRs parses CIDRs (a bare address is its /32 or /128).
func parseCIDRs(ss []string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, s := range ss {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			a, aerr := netip.ParseAddr(s)
			if aerr != nil {
				return nil, fmt.Errorf("%q: want a CIDR such as 198.18.0.0/15 or an address: %w", s, err)
			}
			p = netip.PrefixFrom(a, a.BitLen())
		}
		out = append(out, p.Masked())
	}
	return out, nil
}

// parseMACs parses MAC addresses.
func parseMACs(ss []string) ([]net.HardwareAddr, error) {
	var out []net.HardwareAddr
	for _, s := range ss {
		m, err := net.ParseMAC(s)
		if err != nil {
			return nil, fmt.Errorf("%q: want a MAC such as 02:00:00:00:00:01: %w", s, err)
		}
		out = append(out, m)
	}
	return out, nil
}

// parseVLANs parses VLAN ids and inclusive ranges (100-199) of them.
func parseVLANs(ss []string) ([]int, error) {
	var out []int
	for _, s := range ss {
		lo, hi, isRange := strings.Cut(s, "-")
		if !isRange {
			hi = lo
		}
		a, aerr := strconv.Atoi(lo)
		b, berr := strconv.Atoi(hi)
		if aerr != nil || berr != nil || a < 0 || b > 4095 || a > b {
			return nil, fmt.Errorf("%q: want a VLAN id 0-4095 or a range of them such as 100-199", s)
		}
		for v := a; v <= b; v++ {
			out = append(out, v)
		}
	}
	return out, nil
}

// parseKnownChecks parses the --known-check values (CHECK=WHY).
func parseKnownChecks(ss []string) ([]doctor.KnownCheck, error) {
	var out []doctor.KnownCheck
	for _, s := range ss {
		k, err := doctor.ParseKnownCheck(s)
		if err != nil {
			return nil, err
		}
		out = append(out, k)
	}
	return out, nil
}
