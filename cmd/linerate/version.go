package main

import (
	"fmt"

	"github.com/spf13/cobra"

	buildversion "github.com/linerate/linerate/internal/version"
)

func (a *app) versionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print linerate's version, from its build",
		Long: `version prints the version the Go toolchain stamped into this binary: the
module version (a tag, or a pseudo-version naming the commit, +dirty when
the checkout was modified), else the git revision (-dirty when modified),
else "dev" and why the build could not say. Agents announce the same
version, and every stored result records it.`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			v := buildversion.Get()
			if v.Reason != "" {
				fmt.Fprintf(a.stdout, "linerate %s (%s)\n", v.Version, v.Reason)
				return nil
			}
			fmt.Fprintf(a.stdout, "linerate %s\n", v.Version)
			return nil
		},
	}
}
