package main

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"time"

	"github.com/spf13/cobra"

	"github.com/linerate/linerate/agent"
	"github.com/linerate/linerate/topology"
)

type agentFlags struct {
	name, role, iface, bind, advertise, grpcAddr, gossipKey, tlsDir, stateDir, root, metrics string
	join, allowDst                                                                           []string
	insecure, allowMgmtIface                                                                 bool
	shutdownTimeout                                                                          time.Duration
	receiverMemory                                                                           uint64
}

func (a *app) agentCommand() *cobra.Command {
	f := &agentFlags{receiverMemory: agent.DefaultReceiverMemory}
	cmd := &cobra.Command{
		Use:   "agent --role sender|receiver|both --iface IF [--join HOST:PORT...] (--tls-dir DIR | --insecure)",
		Short: "Run the agent a coordinator drives on this host (gossip + gRPC)",
		Long: `agent runs on every host under test. It inspects --iface, restores the IRQ
affinities of a crashed run from --state-dir, serves the Agent gRPC service
(mutual TLS with certificates from 'linerate certs'; only coordinator
certificates are accepted; plaintext only with --insecure) and joins the
serf cluster with compact tags (role, gRPC address, iface, NUMA node, queues,
link speed, backends, version; a receiver adds its data addresses and MAC).
On SIGTERM or SIGINT it stops sending, disarms, restores the tuning, leaves
the cluster and stops.

Leases: one coordinator certificate at a time holds the agent; calls from
any other certificate are refused and every state-changing call is logged
as an audit line. 'linerate agent release' force-releases the lease from
this host, through the agent's admin socket in --state-dir.

Safety rails: a sender sends only to a data address of an alive receiver of
its own cluster, with that receiver's MAC as dst_mac, unless the whole
destination range lies in an --allow-dst CIDR; and it refuses to start when
--iface carries the default route (IPv4 or IPv6) or one of its gRPC or gossip
addresses, unless --allow-mgmt-iface.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return a.agent(cmd.Context(), f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.name, "name", "", "node name (default: the host name); also the certificate name in --tls-dir")
	fl.StringVar(&f.role, "role", "", "sender, receiver or both")
	fl.StringVar(&f.iface, "iface", "", "data interface the agent owns")
	fl.StringVar(&f.bind, "bind", "0.0.0.0:7946", "gossip address:port (empty: no gossip, the agent is only reachable by its gRPC address)")
	fl.StringVar(&f.advertise, "advertise", "", "gossip address:port others reach this host on (default: --bind's)")
	fl.StringVar(&f.grpcAddr, "grpc", ":7443", "gRPC listen address")
	fl.StringSliceVar(&f.join, "join", nil, "cluster members to join (host:port), repeatable: tried in a random order until one answers; when none does the agent keeps running and retries with backoff (1 s doubling to 30 s, jittered)")
	fl.StringVar(&f.gossipKey, "gossip-key", "", "file holding the base64 gossip encryption key (16, 24 or 32 bytes)")
	fl.StringVar(&f.tlsDir, "tls-dir", "", "certificate directory from 'linerate certs'")
	fl.BoolVar(&f.insecure, "insecure", false, "serve gRPC without TLS (anyone who reaches the port can drive the agent)")
	fl.StringVar(&f.stateDir, "state-dir", topology.DefaultStateDir, "directory of the tuning journals")
	fl.StringVar(&f.root, "root", "/", "host root for the NIC topology")
	fl.StringSliceVar(&f.allowDst, "allow-dst", nil, "CIDR a sender may also send to (no receiver of the cluster needed, dst_mac not checked), repeatable")
	fl.BoolVar(&f.allowMgmtIface, "allow-mgmt-iface", false, "let a sender send from an interface that carries the default route or the gRPC/gossip traffic")
	fl.StringVar(&f.metrics, "metrics", "", "serve Prometheus metrics at http://ADDR/metrics (host:port; empty: off)")
	bytesVar(fl, &f.receiverMemory, "receiver-memory", "the receiver's memory budget for sequence state (streams × per-stream bitmap); a run that needs more is refused, naming the numbers")
	fl.DurationVar(&f.shutdownTimeout, "shutdown-timeout", 10*time.Second, "how long shutdown may take")
	_ = cmd.MarkFlagRequired("role")
	_ = cmd.MarkFlagRequired("iface")
	cmd.AddCommand(a.agentReleaseCommand())
	return cmd
}

func (a *app) agent(ctx context.Context, f *agentFlags) error {
	if f.insecure == (f.tlsDir != "") {
		return usagef("give exactly one of --tls-dir DIR (certificates from 'linerate certs') and --insecure")
	}
	key, err := readGossipKey(f.gossipKey)
	if err != nil {
		return err
	}
	allow, err := parseCIDRs(f.allowDst)
	if err != nil {
		return usagef("--allow-dst: %v", err)
	}
	ag, err := agent.New(agent.Config{
		Name: f.name, Role: agent.Role(f.role), Iface: f.iface, Bind: f.bind, Advertise: f.advertise, GRPCAddr: f.grpcAddr,
		Join: f.join, GossipKey: key, TLSDir: f.tlsDir, Insecure: f.insecure, StateDir: f.stateDir, Root: f.root,
		AllowDst: allow, AllowMgmtIface: f.allowMgmtIface, MetricsAddr: f.metrics, ReceiverMemory: f.receiverMemory,
		Version: version, Logger: a.log.Named("agent"),
	})
	if err != nil {
		return usageError{err}
	}
	if err := ag.Start(ctx); err != nil {
		sctx, cancel := context.WithTimeout(context.Background(), f.shutdownTimeout)
		defer cancel()
		_ = ag.Shutdown(sctx)
		if errors.Is(err, agent.ErrMgmtIface) {
			return usageError{err}
		}
		return err
	}
	<-ctx.Done()
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
