package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/linerate/linerate/coordinator"
	"github.com/linerate/linerate/internal/cluster/gossip"
	"github.com/linerate/linerate/internal/cluster/mtls"
)

// clusterFlags are how a coordinator command reaches the agents: gossip
// to find them, mutual TLS to drive them.
type clusterFlags struct {
	join                                    []string
	joinTimeout                             time.Duration
	bind, advertise, gossipKey, tlsDir, crt string
	insecure, insecureGossip, allowCAKey    bool
	config                                  configFile
}

// register adds the cluster flags to cmd, and --config (default
// coordinatorConfig, whose keys are these flags) loaded before it runs.
func (f *clusterFlags) register(cmd *cobra.Command, a *app) {
	fl := pflag.NewFlagSet(cmd.Name(), pflag.ContinueOnError)
	f.flags(fl)
	fl.VisitAll(func(fg *pflag.Flag) { f.config.keys = append(f.config.keys, fg.Name) })
	cmd.Flags().AddFlagSet(fl)
	f.config.register(cmd.Flags(), coordinatorConfig, "the cluster flags ("+strings.Join(f.config.keys, ", ")+")")
	a.withConfig(cmd, &f.config)
}

func (f *clusterFlags) flags(fl *pflag.FlagSet) {
	fl.StringSliceVar(&f.join, "join", nil, "gossip address (host:port) of any agent of the cluster, repeatable")
	fl.DurationVar(&f.joinTimeout, "join-timeout", coordinator.DefaultJoinTimeout, "how long to keep trying --join when no agent answers (agents not up yet)")
	fl.StringVar(&f.bind, "bind", ":0", "gossip address:port of the coordinator (port 0: any free port; no host: --advertise's, else the address the first --join seed is reached from)")
	fl.StringVar(&f.advertise, "advertise", "", "gossip address:port agents reach the coordinator on (default: --bind's)")
	fl.StringVar(&f.gossipKey, "gossip-key", "", "file holding the cluster's base64 gossip encryption key (default: --tls-dir's "+gossip.KeyFile+")")
	fl.BoolVar(&f.insecureGossip, "insecure-gossip", false, "gossip in plaintext, without a key (anyone who reaches the gossip port can join the cluster and forge members)")
	fl.StringVar(&f.tlsDir, "tls-dir", "", "certificate directory from 'linerate certs' (holds the coordinator's certificate)")
	fl.StringVar(&f.crt, "cert-name", "coordinator", "name of the coordinator's certificate in --tls-dir")
	fl.BoolVar(&f.insecure, "insecure", false, "talk to agents without TLS (they must run with --insecure too)")
	fl.BoolVar(&f.allowCAKey, "allow-ca-key", false, "dial even though --tls-dir holds ca.key (only on the machine that issues certificates)")
}

// gossipKey is the key of --gossip-key, else of --tls-dir's key file, or
// none (the agent and the cluster refuse to gossip without one unless
// --insecure-gossip).
func gossipKey(path, tlsDir string, insecure bool) ([]byte, error) {
	if insecure {
		if path != "" {
			return nil, usagef("give one of --gossip-key %s and --insecure-gossip", path)
		}
		return nil, nil
	}
	key, _, err := gossip.FindKey(path, tlsDir)
	if err != nil {
		return nil, usagef("--gossip-key: %v", err)
	}
	return key, nil
}

// open joins the cluster and returns it with a dialer for its agents,
// once the agents named are alive or --join-timeout has passed since it
// began (then a warning names who is missing and the timeout, and the
// run's discovery fails naming them). A join that fails names the agents
// it was for.
func (f *clusterFlags) open(ctx context.Context, a *app, names ...string) (*coordinator.Cluster, coordinator.Dialer, error) {
	t0 := time.Now()
	if len(f.join) == 0 {
		return nil, nil, usagef("--join: give the gossip address (host:port) of at least one agent")
	}
	if f.joinTimeout <= 0 {
		return nil, nil, usagef("--join-timeout %s: want a positive duration, such as 30s", f.joinTimeout)
	}
	if f.insecure == (f.tlsDir != "") {
		return nil, nil, usagef("give exactly one of --tls-dir DIR (certificates from 'linerate certs') and --insecure")
	}
	if f.insecure {
		a.log.Warn(mtls.InsecureWarning)
	} else if _, err := os.Stat(mtls.CertPath(f.tlsDir, f.crt)); err != nil {
		return nil, nil, usagef("--tls-dir %s: no certificate %q (%v): issue one with 'linerate certs issue --name %s --role coordinator'", f.tlsDir, f.crt, err, f.crt)
	} else if err := mtls.CheckServingDir(f.tlsDir, f.crt, f.allowCAKey); err != nil {
		return nil, nil, usagef("--tls-dir: %w", err)
	}
	key, err := gossipKey(f.gossipKey, f.tlsDir, f.insecureGossip)
	if err != nil {
		return nil, nil, err
	}
	if key == nil && !f.insecureGossip {
		return nil, nil, usageError{gossip.NoKeyError(f.tlsDir)}
	}
	cl, err := coordinator.JoinCluster(ctx, coordinator.ClusterConfig{
		Bind: f.bind, Advertise: f.advertise, Join: f.join, JoinTimeout: f.joinTimeout, GossipKey: key, InsecureGossip: f.insecureGossip, Logger: a.log.Named("cluster"),
	})
	if err != nil {
		if len(names) > 0 {
			return nil, nil, fmt.Errorf("coordinator: waiting for agents %s: %w", strings.Join(names, ", "), err)
		}
		return nil, nil, fmt.Errorf("coordinator: %w", err)
	}
	if len(names) > 0 {
		if _, err := cl.WaitNamed(ctx, names, max(f.joinTimeout-time.Since(t0), 0)); err != nil {
			// The run goes on: its discovery fails naming each agent
			// missing, and this says how long it was waited for.
			a.log.Warn("the agents named are not all alive within --join-timeout", "join-timeout", f.joinTimeout, "error", err)
		}
	}
	dial := coordinator.TLSDialer(mtls.Options{Dir: f.tlsDir, Name: f.crt, Insecure: f.insecure, AllowCAKey: f.allowCAKey})
	return cl, dial, nil
}
