package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/linerate/linerate/pktgen"
)

func (a *app) pktgenCommand() *cobra.Command {
	cmd := group(&cobra.Command{
		Use:   "pktgen",
		Short: "Work with the kernel's pktgen: parse its result files, probe what a device accepts",
	})
	cmd.AddCommand(a.pktgenParse(), a.pktgenProbe(), a.pktgenReset())
	return cmd
}

func (a *app) pktgenParse() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "parse FILE...",
		Short: "Parse /proc/net/pktgen device files (also copies saved from the kernel's sample scripts)",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			out := []*pktgen.DeviceFile{}
			for _, p := range args {
				f, err := os.Open(p)
				if err != nil {
					return usagef("parse %s: %w", p, err)
				}
				df, err := pktgen.ParseDeviceFile(filepath.Base(p), f)
				f.Close()
				if err != nil {
					return fmt.Errorf("%s: %w (want the text of a /proc/net/pktgen/<dev> file)", p, err)
				}
				out = append(out, df)
			}
			if asJSON {
				return a.writeJSON(out)
			}
			return pktgen.WriteDeviceTable(a.stdout, out)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print a JSON array, one object per file")
	return cmd
}

func (a *app) pktgenProbe() *cobra.Command {
	var iface string
	var cpu int
	cmd := &cobra.Command{
		Use:   "probe --iface NAME [--cpu N]",
		Short: "Try burst, clone_skb, queue_xmit and the NODE flag on a device; reset pktgen afterwards",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			k := pktgen.NewKernel(a.log)
			f, err := k.Probe(cmd.Context(), iface, cpu)
			if err != nil {
				return err
			}
			return a.writeJSON(f)
		},
	}
	cmd.Flags().StringVar(&iface, "iface", "", "network interface")
	cmd.Flags().IntVar(&cpu, "cpu", 0, "pktgen thread (CPU) to probe on")
	_ = cmd.MarkFlagRequired("iface")
	return cmd
}

func (a *app) pktgenReset() *cobra.Command {
	return &cobra.Command{
		Use:   "reset",
		Short: "Stop every pktgen thread and detach every device (after a crashed or killed run)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			k := pktgen.NewKernel(a.log)
			if err := k.Reset(); err != nil {
				return err
			}
			fmt.Fprintln(a.stdout, "pktgen reset: no device attached to any thread")
			return nil
		},
	}
}
