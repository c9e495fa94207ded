//go:build !linux

package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

func (a *app) labCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "lab",
		Short: "A lab of hosts made of network namespaces (Linux only)",
		RunE: func(*cobra.Command, []string) error {
			return fmt.Errorf("lab: needs Linux (network namespaces, veth, XDP)")
		},
	}
}
