package main

import (
	"errors"
	"fmt"
	"net/netip"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/linerate/linerate/doctor"
	"github.com/linerate/linerate/doctor/live"
	"github.com/linerate/linerate/internal/enum"
	"github.com/linerate/linerate/pktgen"
	recv "github.com/linerate/linerate/receiver"
	"github.com/linerate/linerate/topology"
	"github.com/linerate/linerate/topology/cpuset"
)

// doctorFlags are `linerate doctor`'s flags.
type doctorFlags struct {
	iface, root, stateDir, role, cpus, addrs string
	backend                                  pktgen.BackendName
	method                                   recv.Method
	irqbalance                               topology.IRQBalance
	frameSize                                int
	known                                    []string
	json, fixAll, restore                    bool
	fix                                      map[doctor.FixClass]*bool
}

// doctorJSON is `doctor --json`: the report, with what --fix changed.
type doctorJSON struct {
	Fixed []doctor.Applied `json:"fixed,omitempty"`
	*doctor.Report
}

// errDoctorFail is the exit of a doctor whose report has a FAIL.
var errDoctorFail = errors.New("host not fit")

func (a *app) doctorCommand() *cobra.Command {
	f := &doctorFlags{fix: map[doctor.FixClass]*bool{}}
	cmd := &cobra.Command{
		Use:   "doctor --iface NAME [--role sender|receiver|both] [--frame-size N] [--backend NAME] [--method NAME] [--fix | --fix-CLASS ...] | --restore",
		Short: "Check the host's fitness for a line-rate benchmark, fix what is allowed, restore the fixes",
		Long: `doctor checks what decides whether a host can carry line rate: irqbalance,
RPS/XPS/RFS, the CPU governor and idle states, busy SMT siblings, the NIC's
NUMA node, flow control, coalescing, rings, offloads, the link, the MTU,
conntrack and the firewall, the kernel features each backend needs, and the
clock. Each check says PASS, WARN or FAIL, what it read, why it matters and
the exact fix (a WARN named by --known-check: KNOWN, with why). It exits 1
when a check FAILs.

--fix applies every class of fix, --fix-CLASS one class (` + enum.And(doctor.FixClasses) + `).
Each setting is journaled in --state-dir before it is written, as IRQ
affinities are; --restore puts back every journaled setting and affinity
(linerate irq restore does too).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// A fix under another root would write into a directory or a
			// snapshot's temporary copy and journal it as the host's.
			if len(f.classes()) > 0 && filepath.Clean(f.root) != "/" {
				return usagef("--root %q: --fix writes the live host, so it needs --root / (the default)", f.root)
			}
			r, cleanup, err := openHost(f.root)
			if err != nil {
				return err
			}
			defer cleanup()
			host := live.Host(r, absPath(f.root), f.iface)
			if f.restore {
				return a.restoreJournals(cmd, host, f.stateDir, f.iface, f.json)
			}
			if f.iface == "" {
				return usagef("--iface: required (the data interface to check), or --restore")
			}
			o, err := f.options()
			if err != nil {
				return err
			}
			var applied []doctor.Applied
			if classes := f.classes(); len(classes) > 0 {
				var err error
				applied, err = doctor.Fix(cmd.Context(), host, o, doctor.FixOptions{
					Classes: classes, Logger: a.log,
					Journal: topology.JournalOptions{StateDir: f.stateDir, RootName: absPath(f.root), Owner: topology.OwnerDoctor},
				})
				if !f.json {
					_ = doctor.WriteApplied(a.stdout, applied)
				}
				if err != nil {
					return doctorError(err)
				}
			}
			rep, err := doctor.Run(cmd.Context(), host, o)
			if err != nil {
				return doctorError(err)
			}
			if f.json {
				err = a.writeJSON(doctorJSON{Fixed: applied, Report: rep})
			} else {
				err = doctor.WriteText(a.stdout, rep)
			}
			if err != nil {
				return err
			}
			if n := rep.Count(doctor.Fail); n > 0 {
				return fmt.Errorf("%s: %d check(s) FAIL: %w", f.iface, n, errDoctorFail)
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.iface, "iface", "", "the data interface to check")
	fl.StringVar(&f.root, "root", "/", "host root to read (a directory or a snapshot .tar.gz); ethtool, nftables and the clock are read only on /")
	fl.StringVar(&f.role, "role", string(doctor.RoleBoth), "the host's part in the run: "+enum.Or(doctor.Roles))
	fl.IntVar(&f.frameSize, "frame-size", 0, "the run's largest frame in bytes with FCS (RFC 2544), checked against the MTU (0: not checked)")
	fl.StringVar(&f.cpus, "cpus", "", "the CPUs the run will use, e.g. 2-5 (default: the queues' planned CPUs)")
	fl.StringVar((*string)(&f.backend), "backend", "", "the run's sender backend, "+enum.Or(pktgen.BackendNames)+": a named one the kernel cannot run FAILs (default: auto, any the host has)")
	fl.StringVar((*string)(&f.method), "method", "", "the run's receiver method, "+enum.Or(recv.Methods)+": a named one the kernel cannot run well is flagged (default: auto, any the host has)")
	fl.StringVar(&f.addrs, "addrs", "", "the run's test addresses, comma-separated (default: the interface's)")
	fl.StringVar((*string)(&f.irqbalance), "irqbalance", string(topology.IRQBalanceRefuse), "the run's irqbalance policy: "+irqbalanceHelp)
	fl.StringArrayVar(&f.known, "known-check", nil, "CHECK=WHY: a check whose WARN is known on this host and needs no action, and why: shown as KNOWN (as the agent's --known-check), repeatable")
	fl.BoolVar(&f.json, "json", false, "print JSON")
	fl.StringVar(&f.stateDir, "state-dir", topology.DefaultStateDir, "directory of the journals the fixes write")
	fl.BoolVar(&f.fixAll, "fix", false, "apply every class of fix (each journaled before it is written)")
	for _, c := range doctor.FixClasses {
		f.fix[c] = fl.Bool("fix-"+string(c), false, "apply the "+string(c)+" fix")
	}
	fl.BoolVar(&f.restore, "restore", false, "put back every setting and affinity the journals in --state-dir hold (one interface with --iface)")
	return cmd
}

// classes are the fix classes the flags allow.
func (f *doctorFlags) classes() []doctor.FixClass {
	var out []doctor.FixClass
	for _, c := range doctor.FixClasses {
		if f.fixAll || *f.fix[c] {
			out = append(out, c)
		}
	}
	return out
}

// doctorFlagOf is the flag of each doctor.OptionError's option.
var doctorFlagOf = map[string]string{"role": "--role", "frame size": "--frame-size", "irqbalance": "--irqbalance", "backend": "--backend", "method": "--method"}

// options are the flags as doctor.Options, each bad value a usage error
// naming its flag.
func (f *doctorFlags) options() (doctor.Options, error) {
	o := doctor.Options{Iface: f.iface, Role: doctor.Role(f.role), FrameSize: f.frameSize, IRQBalance: f.irqbalance, Backend: f.backend, Method: f.method}
	if err := o.Check(); err != nil {
		var oe *doctor.OptionError
		if errors.As(err, &oe) {
			return o, usagef("%s %v", doctorFlagOf[oe.Option], oe.Err)
		}
		return o, usageError{err}
	}
	known, err := parseKnownChecks(f.known)
	if err != nil {
		return o, usagef("--known-check %v", err)
	}
	o.Known = known
	if f.cpus != "" {
		set, err := cpuset.ParseList(f.cpus, 0)
		if err != nil || set.IsEmpty() {
			return o, usagef("--cpus %q: want a CPU list such as 2-5,8 (%v)", f.cpus, err)
		}
		o.CPUs = set.CPUs()
	}
	for _, s := range strings.Split(f.addrs, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		addr, err := netip.ParseAddr(s)
		if err != nil {
			return o, usagef("--addrs %q: %q is not an IP address", f.addrs, s)
		}
		o.Addrs = append(o.Addrs, addr)
	}
	return o, nil
}

// doctorError makes a missing interface a usage error naming --iface.
func doctorError(err error) error {
	if errors.Is(err, topology.ErrNoInterface) {
		return usageError{fmt.Errorf("--iface: %w", err)}
	}
	return err
}
