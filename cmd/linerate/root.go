package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/hashicorp/go-hclog"
	"github.com/spf13/cobra"

	"github.com/linerate/linerate/internal/enum"
	buildversion "github.com/linerate/linerate/internal/version"
	"github.com/linerate/linerate/topology"
)

// version is the binary's, from its build (internal/version).
var version = buildversion.String()

// usageError marks bad invocations (exit 2) as opposed to failures (exit 1).
type usageError struct{ error }

func (e usageError) Unwrap() error { return e.error }

func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

// app carries what every subcommand needs; no globals.
type app struct {
	stdout, stderr io.Writer
	logLevel       string
	logFormat      string
	log            hclog.Logger
}

// logLevels and logFormats are what --log-level and --log-format take:
// the one list each that their check and help say.
var (
	logLevels  = []string{"trace", "debug", "info", "warn", "error"}
	logFormats = []string{"text", "json"}
)

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	a := &app{stdout: stdout, stderr: stderr}
	root := &cobra.Command{
		Use:               "linerate",
		Short:             "Line-rate throughput and loss benchmarking across hosts",
		Version:           version,
		SilenceUsage:      true,
		SilenceErrors:     true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error { return a.initLog() },
	}
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	root.PersistentFlags().StringVar(&a.logLevel, "log-level", "info", "log level: "+strings.Join(logLevels, ", "))
	root.PersistentFlags().StringVar(&a.logFormat, "log-format", logFormats[0], "log format: "+enum.Or(logFormats))
	root.AddCommand(a.irqCommand(), a.doctorCommand(), a.pktgenCommand(), a.sendCommand(), a.certsCommand())
	root.AddCommand(a.recvCommand())
	root.AddCommand(a.agentCommand(), a.membersCommand(), a.runCommand(), a.labCommand())
	root.AddCommand(a.resultsCommand(), a.reportCommand(), a.campaignCommand())
	root.AddCommand(a.versionCommand(), a.genCommand())

	err := root.ExecuteContext(ctx)
	if err == nil || errors.Is(err, errConfigPrinted) {
		return 0
	}
	fmt.Fprintf(stderr, "linerate: %v\n", err)
	var ue usageError
	msg := err.Error()
	if errors.As(err, &ue) || strings.HasPrefix(msg, "unknown command") || strings.HasPrefix(msg, "unknown flag") ||
		strings.HasPrefix(msg, "required flag") || strings.HasPrefix(msg, "unknown shorthand flag") {
		return 2
	}
	return 1
}

// initLog makes the logger --log-level and --log-format say (again
// when a configuration file set them).
func (a *app) initLog() error {
	lvl := hclog.LevelFromString(a.logLevel)
	if lvl == hclog.NoLevel {
		return usagef("--log-level %q: valid levels are %s", a.logLevel, strings.Join(logLevels, ", "))
	}
	if !slices.Contains(logFormats, a.logFormat) {
		return usagef("--log-format %q: valid formats are %s", a.logFormat, enum.And(logFormats))
	}
	a.log = hclog.New(&hclog.LoggerOptions{Name: "linerate", Level: lvl, Output: a.stderr, JSONFormat: a.logFormat == "json"})
	return nil
}

// group makes a command that only holds subcommands: alone it prints its
// help; with an unknown subcommand it is a usage error.
func group(cmd *cobra.Command) *cobra.Command {
	cmd.Args = cobra.ArbitraryArgs
	cmd.RunE = func(c *cobra.Command, args []string) error {
		if len(args) == 0 {
			return c.Help()
		}
		var names []string
		for _, sub := range c.Commands() {
			names = append(names, sub.Name())
		}
		return usagef("unknown command %q for %q (valid: %s)", args[0], c.CommandPath(), strings.Join(names, ", "))
	}
	return cmd
}

// writeJSON prints v as indented JSON.
func (a *app) writeJSON(v any) error {
	enc := json.NewEncoder(a.stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// openHost opens --root with topology.OpenHost (a directory, or a
// snapshot .tar.gz unpacked into a temporary directory), a path that is
// neither being a usage error; the returned cleanup closes the root and
// removes an unpacked snapshot.
func openHost(dir string) (*topology.DirRoot, func(), error) {
	r, err := topology.OpenHost(dir)
	switch {
	case errors.Is(err, topology.ErrNoSnapshot):
		return nil, nil, usagef("--root %s: %w (want a directory or a snapshot from `linerate irq snapshot`)", dir, err)
	case errors.Is(err, topology.ErrNotDir):
		return nil, nil, usagef("--root %q: not a directory (want a host root such as / or an unpacked snapshot, or a snapshot .tar.gz)", dir)
	case err != nil:
		return nil, nil, fmt.Errorf("--root %s: %w", dir, err)
	}
	return r, func() { r.Close() }, nil
}
