package main

import (
	"errors"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/linerate/linerate/internal/config"
)

// The configuration files' defaults: the agent's every flag, a
// coordinator command's cluster flags.
const (
	agentConfig       = "/etc/linerate/agent.yaml"
	coordinatorConfig = "/etc/linerate/coordinator.yaml"
)

// errConfigPrinted ends a command whose --print-config printed the
// configuration: exit status 0, nothing more done.
var errConfigPrinted = errors.New("configuration printed")

// configFile is a command's --config and --print-config: a YAML file
// whose keys are the command's flags (keys: only these; nil: every one).
type configFile struct {
	path  string
	print bool
	keys  []string
}

func (c *configFile) register(fl *pflag.FlagSet, def, what string) {
	fl.StringVar(&c.path, "config", def, "YAML file of "+what+", keys the flags' long names (a flag given wins); the default file may be absent, an empty value reads none")
	fl.BoolVar(&c.print, "print-config", false, "print the effective configuration as such a file, each value's source after it, and exit")
}

// withConfig makes cmd load c before it runs: after the flags are
// parsed, before cobra checks the required ones (a file may give them).
func (a *app) withConfig(cmd *cobra.Command, c *configFile) {
	cmd.PreRunE = func(cmd *cobra.Command, _ []string) error { return a.loadConfig(cmd, c) }
}

func (a *app) loadConfig(cmd *cobra.Command, c *configFile) error {
	fl := cmd.Flags()
	cmdline := config.Changed(fl)
	keys := config.Keys(fl, c.keys)
	var set []string
	if c.path != "" {
		data, err := os.ReadFile(c.path)
		switch {
		case errors.Is(err, fs.ErrNotExist) && !fl.Changed("config"):
			// No default file: the flags alone.
		case err != nil:
			return usagef("--config: %v", err)
		default:
			if set, err = config.Load(fl, keys, c.path, data); err != nil {
				return usageError{err}
			}
		}
	}
	if slices.Contains(set, "log-level") || slices.Contains(set, "log-format") {
		if err := a.initLog(); err != nil {
			return err
		}
	}
	if c.print {
		head := cmd.CommandPath() + ": the effective configuration, each value's source after it"
		if err := config.Encode(a.stdout, head, config.Effective(fl, keys, cmdline, set, c.path)); err != nil {
			return err
		}
		return errConfigPrinted
	}
	var missing []string
	fl.VisitAll(func(f *pflag.Flag) {
		if req := f.Annotations[cobra.BashCompOneRequiredFlag]; len(req) > 0 && req[0] == "true" && !f.Changed {
			missing = append(missing, f.Name)
		}
	})
	if len(missing) > 0 {
		where := "with --config FILE"
		if c.path != "" {
			where = "in " + c.path
		}
		return usagef(`required flag(s) "%s" not set: give them on the command line or %s`, strings.Join(missing, `", "`), where)
	}
	return nil
}
