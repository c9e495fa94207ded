package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/linerate/linerate/agent"
	"github.com/linerate/linerate/topology"
)

// agentReleaseCommand is `linerate agent release`: the operator's
// force-release through the agent's local admin socket.
func (a *app) agentReleaseCommand() *cobra.Command {
	var stateDir, name string
	var asJSON bool
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "release [--state-dir DIR] [--name NAME] [--json]",
		Short: "Force-release the agent's lease on this host: stop its run and restore the host",
		Long: `release ends the lease of the agent running on this host, whoever holds it,
as if it had expired: the agent stops any send, disarms its receiver and
restores the IRQ affinities it tuned. It talks to the agent through the unix
socket the agent serves in its state directory (DIR/admin/NAME.sock, mode
0600: run it as the agent's user, root). It cannot be reached over the
network. Without --name, the only agent of --state-dir is meant.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, cancel := context.WithTimeout(cmd.Context(), timeout)
			defer cancel()
			res, err := agent.ForceRelease(ctx, stateDir, name)
			if err != nil {
				return err
			}
			if asJSON {
				return a.writeJSON(res)
			}
			err = res.WriteText(a.stdout)
			if err == nil && res.Error != "" {
				err = fmt.Errorf("the lease is released, but cleaning up failed: %s", res.Error)
			}
			return err
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&stateDir, "state-dir", topology.DefaultStateDir, "the agent's --state-dir")
	fl.StringVar(&name, "name", "", "the agent's --name (default: the only agent of --state-dir)")
	fl.BoolVar(&asJSON, "json", false, "print what was done as JSON")
	fl.DurationVar(&timeout, "timeout", time.Minute, "how long to wait for the agent")
	return cmd
}
