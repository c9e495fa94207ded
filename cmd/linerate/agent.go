package main

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/linerate/linerate/agent"
	"github.com/linerate/linerate/topology"
)

type agentFlags struct {
	name, role, iface, bind, advertise, grpcAddr, gossipKey, tlsDir, stateDir, root string
	join                                                                            []string
	insecure                                                                        bool
	shutdownTimeout                                                                 time.Duration
}

func (a *app) agentCommand() *cobra.Command {
	f := &agentFlags{}
	cmd := &cobra.Command{
		Use:   "agent --role sender|receiver|both --iface IF [--join HOST:PORT...] (--tls-dir DIR | --insecure)",
		Short: "Run the agent a coordinator drives on this host (gossip + gRPC)",
		Long: `agent runs on every host under test. It inspects --iface, restores the IRQ
affinities of a crashed run from --state-dir, serves the Agent gRPC service
(mutual TLS with certificates from 'linerate certs'; only coordinator
certificates are accepted; plaintext only with --insecure) and joins the
serf cluster with compact tags (role, gRPC address, iface, NUMA node, queues,
link speed, backends, version). On SIGTERM or SIGINT it stops sending,
disarms, restores the tuning, leaves the cluster and stops.`,
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
	fl.StringSliceVar(&f.join, "join", nil, "cluster members to join (host:port), repeatable")
	fl.StringVar(&f.gossipKey, "gossip-key", "", "file holding the base64 gossip encryption key (16, 24 or 32 bytes)")
	fl.StringVar(&f.tlsDir, "tls-dir", "", "certificate directory from 'linerate certs'")
	fl.BoolVar(&f.insecure, "insecure", false, "serve gRPC without TLS (anyone who reaches the port can drive the agent)")
	fl.StringVar(&f.stateDir, "state-dir", topology.DefaultStateDir, "directory of the tuning journals")
	fl.StringVar(&f.root, "root", "/", "host root for the NIC topology")
	fl.DurationVar(&f.shutdownTimeout, "shutdown-timeout", 10*time.Second, "how long shutdown may take")
	_ = cmd.MarkFlagRequired("role")
	_ = cmd.MarkFlagRequired("iface")
	return cmd
}

func (a *app) agent(ctx context.Context, f *agentFlags) error {
	if f.insecure == (f.tlsDir != "") {
		return usagef("give exactly one of --tls-dir DIR (certificates from 'linerate certs') and --insecure")
	}
	var key []byte
	if f.gossipKey != "" {
		b, err := os.ReadFile(f.gossipKey)
		if err != nil {
			return usagef("--gossip-key: %v", err)
		}
		key, err = base64.StdEncoding.DecodeString(strings.TrimSpace(string(b)))
		if err != nil {
			return usagef("--gossip-key %s: not base64: %v", f.gossipKey, err)
		}
	}
	ag, err := agent.New(agent.Config{
		Name: f.name, Role: f.role, Iface: f.iface, Bind: f.bind, Advertise: f.advertise, GRPCAddr: f.grpcAddr,
		Join: f.join, GossipKey: key, TLSDir: f.tlsDir, Insecure: f.insecure, StateDir: f.stateDir, Root: f.root,
		Version: version, Logger: a.log.Named("agent"),
	})
	if err != nil {
		return usageError{err}
	}
	if err := ag.Start(ctx); err != nil {
		sctx, cancel := context.WithTimeout(context.Background(), f.shutdownTimeout)
		defer cancel()
		_ = ag.Shutdown(sctx)
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
