package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/linerate/linerate/cmd/linerate/internal/gendoc"
	buildversion "github.com/linerate/linerate/internal/version"
)

// agentConfigPath is where the package installs the agent's commented
// default configuration.
const agentConfigPath = "/etc/linerate/agent.yaml"

// agentConfigSkip are the agent's flags that are not keys of its
// configuration file: help, and the flags that name or print the file.
var agentConfigSkip = []string{"help", "config", "print-config"}

// genCommand is hidden: what `make package` generates from the commands
// (man pages, the default agent configuration, the package's version).
// The shell completions are cobra's own `completion` command.
func (a *app) genCommand() *cobra.Command {
	cmd := group(&cobra.Command{
		Use:    "gen",
		Short:  "Generate what the package ships from the commands: man pages, the default agent configuration, the Debian version",
		Hidden: true,
	})
	var dir, date string
	man := &cobra.Command{
		Use:   "man --dir DIR",
		Short: "Write a man page (section 1) for every command into DIR",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if dir == "" {
				return usagef("gen man: --dir DIR is required (the directory to write the pages into)")
			}
			d, err := time.Parse(time.DateOnly, date)
			if err != nil {
				return usagef("gen man --date %q: want a date such as 2026-12-05", date)
			}
			if err := gendoc.Man(cmd.Root(), dir, version, d); err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "man pages written to %s\n", dir)
			return nil
		},
	}
	man.Flags().StringVar(&dir, "dir", "", "directory to write the pages into (created)")
	man.Flags().StringVar(&date, "date", time.Now().UTC().Format(time.DateOnly), "the pages' date (YYYY-MM-DD)")
	config := &cobra.Command{
		Use:   "agent-config",
		Short: "Print the agent's commented default configuration (" + agentConfigPath + "): every flag a key at its default",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ag, _, err := cmd.Root().Find([]string{"agent"})
			if err != nil {
				return fmt.Errorf("gen agent-config: find the agent command: %w", err)
			}
			return gendoc.Config(a.stdout, gendoc.ConfigHeader{Path: agentConfigPath, Command: "linerate agent", Version: version},
				ag.NonInheritedFlags(), agentConfigSkip...)
		},
	}
	debVersion := &cobra.Command{
		Use:   "debian-version",
		Short: "Print this binary's version as a Debian package version",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			fmt.Fprintln(a.stdout, buildversion.Debian(version))
			return nil
		},
	}
	cmd.AddCommand(man, config, debVersion)
	return cmd
}
