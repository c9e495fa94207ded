//go:build linux

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/linerate/linerate/cmd/linerate/internal/lab"
	"github.com/linerate/linerate/coordinator"
)

// labFlags shape a lab.
type labFlags struct {
	name               string
	senders, receivers int
	queues             int
	hosts              string
	vcpus              int
	lossEvery          uint64
	lossPct            float64
	shape              string
	delay              string
	agentLogLevel      string
	readyTimeout       time.Duration
	vlan               int      // the VLAN the switch carries (lab up --vlan; lab run's --vlan)
	guestFiles         []string // lab up --guest-file: absolute paths after check
	spec               lab.Spec
	flags              *pflag.FlagSet // where they were registered: which were given
}

func (f *labFlags) register(fl *pflag.FlagSet, defName string) {
	f.flags = fl
	fl.StringVar(&f.name, "name", defName, "lab name: part of every namespace (lr-NAME-…) and interface, 1-11 characters")
	fl.IntVar(&f.senders, "senders", 2, "sender hosts")
	fl.IntVar(&f.receivers, "receivers", 2, "receiver hosts")
	fl.StringVar(&f.hosts, "hosts", lab.HostsNetns, "what a host is: netns (a network namespace, fast) or vm (a qemu guest with its own kernel, pktgen and queue IRQs)")
	fl.IntVar(&f.vcpus, "vcpus", lab.DefaultVCPUs, "with --hosts vm: each guest's vCPUs, half on NUMA node 0, half on node 1 (its data NIC's node)")
	fl.IntVar(&f.queues, "queues", 1, fmt.Sprintf("rx/tx queues per data interface (with --hosts vm: queue pairs of the guest's virtio NIC, default %d)", lab.DefaultVMQueues))
	fl.Uint64Var(&f.lossEvery, "loss-every", 0, "the switch drops every K-th test packet (K ≥ 2) and counts it")
	fl.Float64Var(&f.lossPct, "loss", 0, "the switch drops this percentage of test packets at random (0-100) and counts it")
	fl.StringVar(&f.shape, "shape", "", "tbf on the switch ports toward the receivers (every host with --bidir, --reverse): a slower link, e.g. 200mbit, 1gbit")
	fl.StringVar(&f.delay, "delay", "", "with --hosts vm: D[,JITTER] added on the path toward the receivers, e.g. 20ms or 20ms,1ms: netem on each sender guest's data interface (D ≤ 10s, JITTER ≤ D); kernel pktgen then sends in xmit_mode queue_xmit, through it")
	fl.StringVar(&f.agentLogLevel, "agent-log-level", "info", "the agents' log level (their logs are in the lab directory)")
	fl.DurationVar(&f.readyTimeout, "ready-timeout", 20*time.Second, "how long the agents may take to come up")
}

// vmReadyTimeout is --ready-timeout's default with --hosts vm: a guest
// boots and starts its agent in seconds with KVM, in tens of seconds
// under TCG on a busy machine.
const vmReadyTimeout = 3 * time.Minute

// check turns the flags into a lab.Spec.
func (f *labFlags) check() error {
	fl := f.flags
	if f.lossEvery > 0 && f.lossPct > 0 {
		return usagef("--loss-every %d and --loss %g: give one", f.lossEvery, f.lossPct)
	}
	if f.lossEvery == 1 {
		return usagef("--loss-every 1: would drop every packet; want 2 or more")
	}
	if f.lossPct < 0 || f.lossPct > 100 || math.IsNaN(f.lossPct) {
		return usagef("--loss %g: want a percentage from 0 to 100", f.lossPct)
	}
	vcpus := 0
	switch f.hosts {
	case lab.HostsNetns:
		if f.queues < 1 || f.queues > 64 {
			return usagef("--queues %d: want 1-64", f.queues)
		}
		if fl.Changed("vcpus") {
			return usagef("--vcpus %d: only VM hosts have vCPUs (--hosts vm)", f.vcpus)
		}
	case lab.HostsVM:
		if !fl.Changed("queues") {
			f.queues = lab.DefaultVMQueues
		}
		if !fl.Changed("ready-timeout") {
			f.readyTimeout = vmReadyTimeout
		}
		vcpus = f.vcpus
	default:
		return usagef("--hosts %q: want netns (network namespaces) or vm (qemu guests)", f.hosts)
	}
	var shape uint64
	if f.shape != "" {
		var err error
		if shape, err = lab.ParseBitRate(f.shape); err != nil {
			return usagef("--shape %q: %v", f.shape, err)
		}
	}
	var delay lab.Delay
	if fl.Changed("delay") {
		var err error
		if delay, err = lab.ParseDelay(f.delay); err != nil {
			return usagef("--delay %q: %v", f.delay, err)
		}
		if f.hosts != lab.HostsVM {
			return usagef("--delay %s: needs --hosts vm: the hosts of --hosts %s share this machine's kernel, which has no netem qdisc (a VM guest's kernel has sch_netem)", f.delay, f.hosts)
		}
	}
	if len(f.guestFiles) > 0 && f.hosts != lab.HostsVM {
		return usagef("--guest-file %s: needs --hosts vm (the hosts of --hosts %s share this machine's files)", strings.Join(f.guestFiles, ","), f.hosts)
	}
	if len(f.guestFiles) > 0 {
		files, err := lab.GuestFiles(f.guestFiles)
		if err != nil {
			return usagef("--guest-file: %v", err)
		}
		f.guestFiles = files
	}
	f.spec = lab.Spec{
		Name: f.name, Senders: f.senders, Receivers: f.receivers, Queues: f.queues, ShapeBPS: shape, Mgmt: true,
		Hosts: f.hosts, VCPUs: vcpus, Delay: delay, VLAN: f.vlan,
		Loss: lab.Loss{Every: f.lossEvery, BasisPoints: uint32(math.Round(f.lossPct * 100))},
	}
	if err := f.spec.Validate(); err != nil {
		return usagef("%v", err)
	}
	return nil
}

func (a *app) labCommand() *cobra.Command {
	cmd := group(&cobra.Command{
		Use:   "lab",
		Short: "A lab of sender and receiver hosts on this machine: network namespaces, or qemu guests (--hosts vm)",
		Long: `lab builds hosts from network namespaces (--hosts netns, the default and
fast mode) or qemu guests with kernels of their own (--hosts vm: pktgen, a
multiqueue virtio NIC on NUMA node 1 whose queue IRQs are pinned and
verified, a switch port that really drops): each sender and receiver has a
data interface into a "switch" namespace that bridges them, and a separate
management network for gossip and gRPC. Real 'linerate agent' processes run
in the hosts with certificates the lab issues; the calling process is the
coordinator. The switch can lose a known share of test packets (--loss-every,
--loss) or shape toward the receivers (--shape), and reports its own counts.
With --hosts vm, --delay adds a known delay toward the receivers: netem on
each sender guest's data interface (this machine's kernel has none), which
kernel pktgen passes through in xmit_mode queue_xmit.`,
	})
	cmd.AddCommand(a.labRunCommand(), a.labUpCommand(), a.labDownCommand(), a.labExecCommand(), a.labCampaignCommand(), a.labNetemCommand())
	return cmd
}

func (a *app) labRunCommand() *cobra.Command {
	lf := &labFlags{}
	rf := &runFlags{}
	cmd := &cobra.Command{
		Use:   "run [--senders 2] [--receivers 2] [--pattern pairwise] [--frame-size 64] [--duration 3s] [--loss-every K | --loss PCT] [--shape RATE] [--json]",
		Short: "Build a lab, drive one run through its agents, report, and remove everything",
		Long: `lab run builds the lab, starts its agents, runs as 'linerate run' does
(every sender of the lab to the receivers in --pattern), adds the switch's
own counters to the report ("lab": {"switch_ports": …}) and removes the lab:
no namespace, link, process or journal is left, also after Ctrl-C, SIGTERM
or SIGHUP (a closed terminal). With --bidir or --reverse every host's agent
runs with role both, every switch port drops (--loss-every, --loss) what its
host sends and shapes (--shape) what goes toward it, and the switch's drops
are given per direction.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !cmd.Flags().Changed("count") && !cmd.Flags().Changed("duration") {
				rf.spec.Duration = 3 * time.Second
			}
			return a.labRun(cmd.Context(), lf, rf)
		},
	}
	lf.register(cmd.Flags(), fmt.Sprintf("run%d", os.Getpid()%100000))
	rf.register(cmd.Flags())
	cmd.Flags().Lookup("duration").DefValue = "3s" // unless --count is given
	return cmd
}

func (a *app) labRun(ctx context.Context, lf *labFlags, rf *runFlags) error {
	// The run's tag is the one the lab's switch carries.
	lf.vlan = rf.spec.VLAN
	if err := lf.check(); err != nil {
		return err
	}
	if err := rf.check(); err != nil {
		return err
	}
	spec := rf.spec
	spec.Senders, spec.Receivers = lf.spec.SenderNames(), lf.spec.ReceiverNames()
	var err error
	if spec.XmitMode, err = lf.spec.XmitMode(spec.XmitMode); err != nil {
		return usagef("--xmit-mode: %v", err)
	}
	if err := spec.Validate(); err != nil {
		return usageError{fmt.Errorf("lab run: %w", err)}
	}
	// Traffic either way: every host's agent sends and receives, every
	// port has the loss program and the shaper.
	lf.spec.Both = spec.Bidir || spec.Reverse
	s, err := a.openLab(ctx, lf)
	if err != nil {
		return err
	}
	defer a.closeLab(s)
	res, err := s.Measure(func() (*coordinator.Result, error) { return a.drive(ctx, s.Runner(), spec, rf) })
	if err != nil {
		return err
	}
	return a.report(res, rf)
}

// openLab builds the lab lf describes with its agents and joins their
// cluster; closeLab removes it.
func (a *app) openLab(ctx context.Context, lf *labFlags) (*lab.Session, error) {
	s, err := lab.Open(ctx, lab.Options{
		Spec:   lf.spec,
		Agents: lab.AgentOptions{LogLevel: lf.agentLogLevel, Ready: lf.readyTimeout, GuestFiles: lf.guestFiles},
		Log:    a.log,
	})
	var exists *lab.ExistsError
	if errors.As(err, &exists) {
		return nil, usageError{err}
	}
	return s, err
}

func (a *app) closeLab(s *lab.Session) {
	if err := s.Close(); err != nil {
		a.log.Error("lab down", "error", err)
	}
}

func (a *app) labUpCommand() *cobra.Command {
	lf := &labFlags{}
	cmd := &cobra.Command{
		Use:   "up [--name lab] [--senders 2] [--receivers 2] [--loss-every K | --loss PCT] [--shape RATE]",
		Short: "Build a lab and keep it, with its agents, until Ctrl-C",
		Long: `lab up builds the lab and starts its agents, prints how to reach them
('linerate members' and 'linerate run' flags) and keeps the lab until it is
interrupted, then removes all of it. 'linerate lab down' removes what a
killed 'lab up' left.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return a.labUp(cmd.Context(), lf) },
	}
	lf.register(cmd.Flags(), "lab")
	cmd.Flags().StringArrayVar(&lf.guestFiles, "guest-file", nil, "with --hosts vm: an executable of this machine (a path, or a command name looked up in PATH) that every guest gets at the same path, with its interpreter and shared libraries, to run with 'linerate lab exec' (e.g. trafgen); repeatable")
	cmd.Flags().IntVar(&lf.vlan, "vlan", 0, "every agent may tag its frames with this 802.1Q VLAN id (1-4094; --allow-vlan) and the switch's ports count the tagged test packets: runs with 'linerate run --vlan' use it (the switch, a plain bridge, forwards frames with their tags)")
	return cmd
}

func (a *app) labUp(ctx context.Context, lf *labFlags) error {
	if err := lf.check(); err != nil {
		return err
	}
	s, err := a.openLab(ctx, lf)
	if err != nil {
		return err
	}
	defer a.closeLab(s)
	if err := s.WriteUp(a.stdout); err != nil {
		return err
	}
	// The coordinator of `lab up` only proves the cluster formed.
	s.Leave()
	<-ctx.Done()
	return nil
}

func (a *app) labDownCommand() *cobra.Command {
	var name string
	var all bool
	cmd := &cobra.Command{
		Use:   "down (--name NAME | --all)",
		Short: "Remove what a killed lab left: agents, namespaces, links, its directory",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if (name == "") == !all {
				return usagef("give --name NAME or --all")
			}
			if name != "" {
				if err := lab.CheckName(name); err != nil {
					return usagef("--name: %v", err)
				}
			}
			return a.labDown(name)
		},
	}
	cmd.Flags().StringVar(&name, "name", "", "the lab to remove")
	cmd.Flags().BoolVar(&all, "all", false, "remove every lab (every namespace named lr-…)")
	return cmd
}

func (a *app) labDown(name string) error {
	r, err := lab.RemoveLab(name, a.log)
	if err != nil {
		return fmt.Errorf("lab down: %w", err)
	}
	fmt.Fprintln(a.stdout, r)
	return nil
}

func (a *app) labNetemCommand() *cobra.Command {
	var iface, delay string
	cmd := &cobra.Command{
		Use:   "netem --iface IFACE [--delay D[,JITTER]]",
		Short: "Set or read the netem delay on an interface (what a VM lab's sender guest runs for --delay)",
		Long: `lab netem is the lab's own helper in its sender guests, whose busybox has
no tc for netem: with --delay it makes netem delaying by D (± JITTER) the
interface's root qdisc and checks that the kernel holds it; --delay 0
removes it. It prints the delay the interface's netem holds (0s: none).`,
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if iface == "" {
				return usagef("--iface: give the interface")
			}
			var got lab.Delay
			var err error
			if cmd.Flags().Changed("delay") {
				d, perr := lab.ParseDelay(delay)
				if perr != nil {
					return usagef("--delay %q: %v", delay, perr)
				}
				got, err = lab.ApplyNetem(iface, d)
			} else {
				got, err = lab.ReadNetem(iface)
			}
			if err != nil {
				return err
			}
			_, err = fmt.Fprintln(a.stdout, got)
			return err
		},
	}
	cmd.Flags().StringVar(&iface, "iface", "", "the interface")
	cmd.Flags().StringVar(&delay, "delay", "", "D[,JITTER] to set, e.g. 20ms or 20ms,1ms; 0 removes the netem")
	return cmd
}

func (a *app) labExecCommand() *cobra.Command {
	var name string
	cmd := &cobra.Command{
		Use:   "exec --name NAME HOST COMMAND [ARG...]",
		Short: "Run a shell command in a VM host of a lab that 'lab up --hosts vm' keeps",
		Long: `lab exec runs COMMAND (its words joined by spaces, run by the guest's
/bin/sh as root, in /tmp, stdin /dev/null) in the guest of VM host HOST (s1,
r1, …) of the lab NAME that 'linerate lab up --hosts vm' keeps, over the
guest's shell port, one command at a time per guest. It prints the output
(stdout and stderr together, when the command has ended) and fails unless
the command exits 0, naming its status. Executables the guests lack are
given to them by 'lab up --guest-file'; a command meant to outlive lab exec
runs in the background with its output in files ('… >/tmp/out 2>&1 &').`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) < 2 {
				return usagef("give HOST and COMMAND: lab exec --name NAME HOST COMMAND [ARG...]")
			}
			if err := lab.CheckName(name); err != nil {
				return usagef("--name: %v", err)
			}
			line := strings.Join(args[1:], " ")
			out, rc, err := lab.Exec(cmd.Context(), name, args[0], line)
			if err != nil {
				return fmt.Errorf("lab exec: %w", err)
			}
			if _, err := io.WriteString(a.stdout, out); err != nil {
				return err
			}
			if rc != 0 {
				return fmt.Errorf("lab exec: %s of lab %s: %q exited with status %d", args[0], name, line, rc)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&name, "name", "", "the lab (lab up's --name)")
	// Flags after HOST are the command's.
	cmd.Flags().SetInterspersed(false)
	_ = cmd.MarkFlagRequired("name")
	return cmd
}
