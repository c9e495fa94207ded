package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/linerate/linerate/coordinator"
	"github.com/linerate/linerate/coordinator/report"
)

type membersFlags struct {
	cluster clusterFlags
	wait    int
	timeout time.Duration
	json    bool
	noCheck bool
}

func (a *app) membersCommand() *cobra.Command {
	f := &membersFlags{}
	cmd := &cobra.Command{
		Use:   "members --join HOST:PORT (--tls-dir DIR | --insecure) [--wait N] [--json]",
		Short: "List the agents of a cluster with role, address, NIC, NUMA node and health",
		Long: `members joins the agents' gossip cluster for a moment, lists every agent
(role, gRPC address, interface, NUMA node, queues, link speed, backends,
version) and asks each one's health service whether it is serving.
--wait N waits (up to --timeout) until N agents are alive.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return a.members(cmd.Context(), f) },
	}
	f.cluster.register(cmd, a)
	cmd.Flags().IntVar(&f.wait, "wait", 0, "wait until this many agents are alive")
	cmd.Flags().DurationVar(&f.timeout, "timeout", 10*time.Second, "how long --wait and the health checks may take")
	cmd.Flags().BoolVar(&f.json, "json", false, "print JSON")
	cmd.Flags().BoolVar(&f.noCheck, "no-health", false, "skip the gRPC health checks")
	return cmd
}

func (a *app) members(ctx context.Context, f *membersFlags) error {
	if f.wait < 0 {
		return usagef("--wait %d: want 0 or more agents", f.wait)
	}
	cl, dial, err := f.cluster.open(ctx, a)
	if err != nil {
		return err
	}
	defer cl.Close()
	t0 := time.Now()
	ms, err := cl.WaitAlive(ctx, f.wait, f.timeout)
	if err != nil {
		return fmt.Errorf("members: %w", err)
	}
	a.log.Debug("members listed", "agents", len(ms), "after", time.Since(t0))
	deadline := t0.Add(f.timeout)
	if !f.noCheck {
		ms = coordinator.Check(ctx, ms, dial, max(time.Until(deadline), time.Second))
	}
	if f.json {
		if ms == nil {
			ms = []coordinator.Member{}
		}
		return a.writeJSON(ms)
	}
	return report.Members(a.stdout, ms)
}
