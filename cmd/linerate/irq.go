package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/linerate/linerate/doctor"
	"github.com/linerate/linerate/doctor/live"
	"github.com/linerate/linerate/internal/ctxsleep"
	"github.com/linerate/linerate/internal/enum"
	"github.com/linerate/linerate/topology"
)

// irqFlags are the flags the irq subcommands share.
// irqbalanceHelp is the --irqbalance policies for a flag's help (irq
// apply, run): "refuse (stop with advice) or ignore (pin and warn)".
var irqbalanceHelp = enum.Or(enum.Explain(topology.IRQBalancePolicies, topology.IRQBalance.Meaning))

type irqFlags struct {
	iface, root, stateDir, exclude, output string
	irqbalance                             topology.IRQBalance
	threads                                int
	json                                   bool
	wait                                   time.Duration
}

func (a *app) irqCommand() *cobra.Command {
	cmd := group(&cobra.Command{
		Use:   "irq",
		Short: "Inspect, plan, pin, verify and restore NIC queue IRQ affinity",
		Long: `Queue IRQs of a NIC are pinned 1:1 to CPUs on the NIC's own NUMA node.
Every command reads the host through --root (default /), so a snapshot from
another machine can be planned offline. apply journals the original
affinities in --state-dir before writing; restore puts them back.`,
	})
	cmd.AddCommand(a.irqShow(), a.irqPlan(), a.irqApply(), a.irqRestore(), a.irqVerify(), a.irqSnapshot())
	return cmd
}

func (f *irqFlags) common(cmd *cobra.Command, needIface bool) {
	cmd.Flags().StringVar(&f.root, "root", "/", "host root to read (a directory or a snapshot .tar.gz)")
	cmd.Flags().BoolVar(&f.json, "json", false, "print JSON")
	cmd.Flags().StringVar(&f.iface, "iface", "", "network interface")
	if needIface {
		_ = cmd.MarkFlagRequired("iface")
	}
}

func (f *irqFlags) planning(cmd *cobra.Command) {
	cmd.Flags().IntVar(&f.threads, "threads", 0, "plan only the first N queues (0: all)")
	cmd.Flags().StringVar(&f.exclude, "exclude-cpus", "", "CPU list that must not get queue IRQs, e.g. 0,8-9")
}

// irqError makes what the flags got wrong a usage error naming the
// flag: an interface without a NIC, CPUs to exclude, too many threads.
func irqError(err error) error {
	switch {
	case errors.Is(err, topology.ErrNoInterface) || errors.Is(err, topology.ErrNoDevice):
		return usageError{fmt.Errorf("--iface: %w", err)}
	case errors.Is(err, topology.ErrExclude):
		return usagef("--exclude-cpus: %w", err)
	case errors.Is(err, topology.ErrTooManyThreads):
		return usageError{fmt.Errorf("--threads: %w", err)}
	}
	return err
}

func (a *app) irqShow() *cobra.Command {
	f := &irqFlags{}
	cmd := &cobra.Command{
		Use:   "show --iface NAME",
		Short: "Show a NIC's NUMA node, local CPUs and queue IRQs with their current affinity",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			r, cleanup, err := openHost(f.root)
			if err != nil {
				return err
			}
			defer cleanup()
			rep, err := topology.ShowIface(r, f.iface)
			if err != nil {
				return irqError(err)
			}
			if f.json {
				return a.writeJSON(rep)
			}
			return rep.WriteTable(a.stdout)
		},
	}
	f.common(cmd, true)
	return cmd
}

func (a *app) irqPlan() *cobra.Command {
	f := &irqFlags{}
	cmd := &cobra.Command{
		Use:   "plan --iface NAME [--threads N]",
		Short: "Plan queue IRQ → CPU pinning on the NIC's NUMA node (changes nothing)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			r, cleanup, err := openHost(f.root)
			if err != nil {
				return err
			}
			defer cleanup()
			p, err := topology.PlanIface(r, f.iface, f.threads, f.exclude)
			if err != nil {
				return irqError(err)
			}
			rep := topology.PlanReport(p)
			if f.json {
				return a.writeJSON(rep)
			}
			return rep.WriteTable(a.stdout)
		},
	}
	f.common(cmd, true)
	f.planning(cmd)
	return cmd
}

func (a *app) irqApply() *cobra.Command {
	f := &irqFlags{}
	cmd := &cobra.Command{
		Use:   "apply --iface NAME [--threads N]",
		Short: "Journal the current affinities, then pin each queue IRQ to its planned CPU",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := f.irqbalance.Check(); err != nil {
				return usagef("--irqbalance %v", err)
			}
			r, cleanup, err := openHost(f.root)
			if err != nil {
				return err
			}
			defer cleanup()
			p, err := topology.PlanIface(r, f.iface, f.threads, f.exclude)
			if err != nil {
				return irqError(err)
			}
			res, err := topology.Apply(cmd.Context(), r, p, topology.ApplyOptions{
				StateDir: f.stateDir, IRQBalance: f.irqbalance, RootName: absPath(f.root), Owner: topology.OwnerIRQApply, Logger: a.log,
			})
			if res != nil {
				if f.json {
					_ = a.writeJSON(res)
				} else {
					_ = res.WriteTable(a.stdout)
				}
			}
			return err
		},
	}
	f.common(cmd, true)
	f.planning(cmd)
	cmd.Flags().StringVar(&f.stateDir, "state-dir", topology.DefaultStateDir, "directory for the journal of original affinities")
	cmd.Flags().StringVar((*string)(&f.irqbalance), "irqbalance", string(topology.IRQBalanceRefuse), "when irqbalance runs: "+irqbalanceHelp)
	return cmd
}

func (a *app) irqRestore() *cobra.Command {
	f := &irqFlags{}
	cmd := &cobra.Command{
		Use:   "restore [--iface NAME]",
		Short: "Put back the affinities journaled by apply, and the settings doctor's fixes journaled (all interfaces unless --iface)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			r, cleanup, err := openHost(f.root)
			if err != nil {
				return err
			}
			defer cleanup()
			return a.restoreJournals(cmd, live.Host(r, absPath(f.root), f.iface), f.stateDir, f.iface, f.json)
		},
	}
	f.common(cmd, false)
	cmd.Flags().StringVar(&f.stateDir, "state-dir", topology.DefaultStateDir, "directory holding the journals")
	return cmd
}

// restoreJournals puts back every affinity and setting the journals in
// stateDir hold (iface's only, when given) on host, and says what it did.
func (a *app) restoreJournals(cmd *cobra.Command, host doctor.Host, stateDir, iface string, asJSON bool) error {
	res, err := topology.Restore(cmd.Context(), host.Root, topology.RestoreOptions{
		StateDir: stateDir, Iface: iface, RootName: host.RootName, Settings: doctor.Restorers(host), Logger: a.log,
	})
	if asJSON {
		if jerr := a.writeJSON(res); err == nil {
			err = jerr
		}
		return err
	}
	if err == nil || len(res) > 0 {
		_ = topology.WriteRestores(a.stdout, stateDir, res)
	}
	return err
}

func (a *app) irqVerify() *cobra.Command {
	f := &irqFlags{}
	cmd := &cobra.Command{
		Use:   "verify --iface NAME [--for 5s]",
		Short: "Count, over an interval, which CPUs serviced each queue IRQ; flag any off its planned CPU",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if f.wait <= 0 {
				return usagef("--for %s: want a positive duration such as 5s", f.wait)
			}
			r, cleanup, err := openHost(f.root)
			if err != nil {
				return err
			}
			defer cleanup()
			res, err := topology.VerifyIface(cmd.Context(), r, f.iface, f.stateDir, func(ctx context.Context) error {
				return ctxsleep.Sleep(ctx, f.wait)
			})
			if err != nil {
				return irqError(err)
			}
			if f.json {
				err = a.writeJSON(res)
			} else {
				err = res.WriteTable(a.stdout)
			}
			if err == nil && res.OffCPU > 0 {
				err = fmt.Errorf("verify %s: %d queue IRQs fired outside their planned CPUs", f.iface, res.OffCPU)
			}
			return err
		},
	}
	f.common(cmd, true)
	cmd.Flags().StringVar(&f.stateDir, "state-dir", topology.DefaultStateDir, "journal directory: planned CPUs come from the journal when there is one")
	cmd.Flags().DurationVar(&f.wait, "for", 5*time.Second, "interval between the two reads of /proc/interrupts")
	return cmd
}

func (a *app) irqSnapshot() *cobra.Command {
	f := &irqFlags{}
	cmd := &cobra.Command{
		Use:   "snapshot --iface NAME -o host.tar.gz",
		Short: "Capture exactly the files topology reads, for --root elsewhere",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if f.output == "" {
				return usagef("-o: name the snapshot file to write, e.g. -o host.tar.gz")
			}
			base, cleanup, err := openHost(f.root)
			if err != nil {
				return err
			}
			defer cleanup()
			rec, err := topology.RecordIface(base, f.iface)
			if err != nil {
				return irqError(err)
			}
			if err := rec.SaveTarGz(f.output); err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "wrote %s (replay with: linerate irq plan --iface %s --root %s)\n", f.output, f.iface, f.output)
			return nil
		},
	}
	f.common(cmd, true)
	cmd.Flags().StringVarP(&f.output, "output", "o", "", "snapshot file to write (.tar.gz)")
	return cmd
}

// absPath names a root the same way however it was typed, for journals.
func absPath(p string) string {
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return p
}
