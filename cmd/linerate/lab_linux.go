//go:build linux

package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/linerate/linerate/coordinator"
	"github.com/linerate/linerate/coordinator/campaign"
	"github.com/linerate/linerate/internal/lab"
)

// labFlags shape a lab.
type labFlags struct {
	name               string
	senders, receivers int
	queues             int
	lossEvery          uint64
	lossPct            float64
	shape              string
	agentLogLevel      string
	readyTimeout       time.Duration
	spec               lab.Spec
}

func (f *labFlags) register(fl *pflag.FlagSet, defName string) {
	fl.StringVar(&f.name, "name", defName, "lab name: part of every namespace (lr-NAME-…) and interface, 1-11 characters")
	fl.IntVar(&f.senders, "senders", 2, "sender hosts")
	fl.IntVar(&f.receivers, "receivers", 2, "receiver hosts")
	fl.IntVar(&f.queues, "queues", 1, "rx/tx queues per data interface")
	fl.Uint64Var(&f.lossEvery, "loss-every", 0, "the switch drops every K-th test packet (K ≥ 2) and counts it")
	fl.Float64Var(&f.lossPct, "loss", 0, "the switch drops this percentage of test packets at random (0-100) and counts it")
	fl.StringVar(&f.shape, "shape", "", "tbf on the switch ports toward the receivers: a slower link, e.g. 200mbit, 1gbit")
	fl.StringVar(&f.agentLogLevel, "agent-log-level", "info", "the agents' log level (their logs are in the lab directory)")
	fl.DurationVar(&f.readyTimeout, "ready-timeout", 20*time.Second, "how long the agents may take to come up")
}

// check turns the flags into a lab.Spec.
func (f *labFlags) check() error {
	if f.lossEvery > 0 && f.lossPct > 0 {
		return usagef("--loss-every %d and --loss %g: give one", f.lossEvery, f.lossPct)
	}
	if f.lossEvery == 1 {
		return usagef("--loss-every 1: would drop every packet; want 2 or more")
	}
	if f.lossPct < 0 || f.lossPct > 100 || math.IsNaN(f.lossPct) {
		return usagef("--loss %g: want a percentage from 0 to 100", f.lossPct)
	}
	if f.queues < 1 || f.queues > 64 {
		return usagef("--queues %d: want 1-64", f.queues)
	}
	var shape uint64
	if f.shape != "" {
		var err error
		if shape, err = parseBitRate(f.shape); err != nil {
			return usagef("--shape %q: %v", f.shape, err)
		}
	}
	f.spec = lab.Spec{
		Name: f.name, Senders: f.senders, Receivers: f.receivers, Queues: f.queues, ShapeBPS: shape, Mgmt: true,
		Loss: lab.Loss{Every: f.lossEvery, BasisPoints: uint32(math.Round(f.lossPct * 100))},
	}
	if err := f.spec.Validate(); err != nil {
		return usagef("%v", err)
	}
	return nil
}

// parseBitRate reads tc-style rates: 200mbit, 1gbit, 500kbit, 64000bit
// or a plain number of bits per second.
func parseBitRate(s string) (uint64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	mult := uint64(1)
	for _, u := range []struct {
		suffix string
		mult   uint64
	}{{"gbit", 1e9}, {"mbit", 1e6}, {"kbit", 1e3}, {"bit", 1}} {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSuffix(t, u.suffix), u.mult
			break
		}
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || v <= 0 || math.IsInf(v, 0) {
		return 0, fmt.Errorf("want a rate such as 200mbit, 1gbit, 500kbit or bits per second")
	}
	bps := v * float64(mult)
	if bps < 8000 || bps > 400e9 {
		return 0, fmt.Errorf("%.0f bit/s: want 8kbit to 400gbit", bps)
	}
	return uint64(bps), nil
}

func (a *app) labCommand() *cobra.Command {
	cmd := group(&cobra.Command{
		Use:   "lab",
		Short: "A lab of sender and receiver hosts made of network namespaces on this machine",
		Long: `lab builds hosts from network namespaces: each sender and receiver has a
data interface into a "switch" namespace that bridges them, and a separate
management network for gossip and gRPC. Real 'linerate agent' processes run
in the hosts with certificates the lab issues; the calling process is the
coordinator. The switch can lose a known share of test packets (--loss-every,
--loss) or shape toward the receivers (--shape), and reports its own counts.`,
	})
	cmd.AddCommand(a.labRunCommand(), a.labUpCommand(), a.labDownCommand(), a.labCampaignCommand())
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
no namespace, link, process or journal is left, also after Ctrl-C.`,
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
	if err := lf.check(); err != nil {
		return err
	}
	if err := rf.out.check(); err != nil {
		return err
	}
	spec := rf.spec
	for i := range lf.senders {
		spec.Senders = append(spec.Senders, fmt.Sprintf("s%d", i+1))
	}
	for i := range lf.receivers {
		spec.Receivers = append(spec.Receivers, fmt.Sprintf("r%d", i+1))
	}
	if err := spec.Validate(); err != nil {
		return usageError{fmt.Errorf("lab run: %w", err)}
	}
	sess, err := a.labStart(ctx, lf)
	if sess != nil {
		defer sess.down(a)
	}
	if err != nil {
		return err
	}
	res, err := sess.measure(func() (*coordinator.Result, error) {
		return a.drive(ctx, &coordinator.Runner{Cluster: sess.cluster, Dial: sess.dial, ID: "lab-" + lf.name}, spec, rf)
	})
	if err != nil {
		return err
	}
	return a.report(res, rf, func(w io.Writer) { printTruth(w, res.Lab.(lab.Truth)) })
}

// measure performs one run and adds to its result what the switch
// counted while it ran (res.Lab, a lab.Truth).
func (s *labSession) measure(run func() (*coordinator.Result, error)) (*coordinator.Result, error) {
	base, err := s.lab.Truth()
	if err != nil {
		return nil, err
	}
	res, err := run()
	if err != nil {
		return nil, err
	}
	after, err := s.lab.Truth()
	if err != nil {
		return nil, err
	}
	res.Lab = after.Sub(base)
	return res, nil
}

// labSession is a lab with its agents and the coordinator's membership.
type labSession struct {
	lab     *lab.Lab
	conf    *lab.Cluster
	cluster *coordinator.Cluster
	dial    coordinator.Dialer
}

// labStart builds the lab, starts its agents and joins their cluster. On
// error the returned session (if any) still needs down.
func (a *app) labStart(ctx context.Context, lf *labFlags) (*labSession, error) {
	if os.Geteuid() != 0 {
		return nil, fmt.Errorf("lab: needs root (network namespaces, XDP, qdiscs)")
	}
	left, err := lab.Leftovers()
	if err != nil {
		return nil, fmt.Errorf("lab: %w", err)
	}
	for _, n := range left {
		if strings.HasPrefix(n, lab.Prefix(lf.name)) {
			return nil, usagef("lab %s exists already (namespace %s): remove it with 'linerate lab down --name %s'", lf.name, n, lf.name)
		}
	}
	bin, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("lab: find the linerate binary for the agents: %w", err)
	}
	l, err := lab.Up(lf.spec, a.log)
	if err != nil {
		return nil, err
	}
	s := &labSession{lab: l}
	if s.conf, err = l.StartAgents(ctx, lab.AgentOptions{Binary: bin, LogLevel: lf.agentLogLevel, Ready: lf.readyTimeout}); err != nil {
		return s, err
	}
	cf := clusterFlags{join: s.conf.Join[:1], bind: s.conf.Bind, gossipKey: s.conf.GossipKey, tlsDir: s.conf.TLSDir, crt: lab.CoordinatorCert}
	if s.cluster, s.dial, err = cf.open(a); err != nil {
		return s, err
	}
	want := len(l.Hosts())
	if _, err := s.cluster.WaitAlive(ctx, want, lf.readyTimeout); err != nil {
		return s, fmt.Errorf("lab %s: %w", lf.name, err)
	}
	a.log.Info("lab ready", "lab", lf.name, "agents", want, "dir", s.conf.Dir)
	return s, nil
}

func (s *labSession) down(a *app) {
	if s.cluster != nil {
		if err := s.cluster.Close(); err != nil {
			a.log.Warn("leave the lab cluster", "error", err)
		}
	}
	if err := s.lab.Down(); err != nil {
		a.log.Error("lab down", "error", err)
	}
}

func printTruth(w io.Writer, t lab.Truth) {
	fmt.Fprintln(w, "\nswitch (the lab's own counts):")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "PORT\tTO\tTEST IN\tTX\tDROPS\tPROGRAM\tQDISC\tLINK\t")
	for _, p := range t.SwitchPorts {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t\n", p.Name, p.To, p.TestPackets, p.TxPackets, p.Drops, p.ProgDrops, p.QdiscDrops, p.LinkDrops)
	}
	tw.Flush()
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
	return cmd
}

func (a *app) labUp(ctx context.Context, lf *labFlags) error {
	if err := lf.check(); err != nil {
		return err
	}
	sess, err := a.labStart(ctx, lf)
	if sess != nil {
		defer sess.down(a)
	}
	if err != nil {
		return err
	}
	c := sess.conf
	flags := fmt.Sprintf("--join %s --bind %s --gossip-key %s --tls-dir %s", c.Join[0], c.Bind, c.GossipKey, c.TLSDir)
	fmt.Fprintf(a.stdout, "lab %s up: %d senders (s1…), %d receivers (r1…); directory %s\n", lf.name, lf.senders, lf.receivers, c.Dir)
	fmt.Fprintf(a.stdout, "  linerate members %s\n", flags)
	fmt.Fprintf(a.stdout, "  linerate run %s --senders %s --receivers %s --duration 3s\n", flags, names("s", lf.senders), names("r", lf.receivers))
	fmt.Fprintln(a.stdout, "Ctrl-C removes the lab.")
	// The coordinator of `lab up` only proves the cluster formed.
	if err := sess.cluster.Close(); err != nil {
		a.log.Warn("leave the lab cluster", "error", err)
	}
	sess.cluster = nil
	<-ctx.Done()
	return nil
}

func names(prefix string, n int) string {
	var out []string
	for i := range n {
		out = append(out, fmt.Sprintf("%s%d", prefix, i+1))
	}
	return strings.Join(out, ",")
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
	fmt.Fprintf(a.stdout, "removed: %d namespaces\n", len(r.Namespaces))
	return nil
}

func (a *app) labCampaignCommand() *cobra.Command {
	lf := &labFlags{}
	out := &outputFlags{}
	var sizes, rates []string
	var search, resolution, maxRate, minRate, duration, pattern, backend string
	var lossGoal float64
	var threads int
	cmd := &cobra.Command{
		Use:   "campaign [SPEC.yaml] [--sizes 64,512,1518] [--search rfc2544|ndr-pdr|none] [--shape RATE] [--json] [--html FILE]",
		Short: "Build a lab and run a campaign on it (a spec file, or one from the flags)",
		Long: `lab campaign builds the lab (as lab run does), runs a campaign on its agents
and removes the lab. With SPEC.yaml the spec is the one 'campaign run'
takes (its agents are the lab's s1…, r1…); without, the flags make one.
With --shape the line rate that rates in % and the search bounds refer to
is the shaped rate (tbf counts frames without FCS), and a trial whose
senders were slowed below the offered rate fails (the shaped path pushed
back on the senders) instead of being invalid.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := out.check(); err != nil {
				return err
			}
			if err := lf.check(); err != nil {
				return err
			}
			var spec *campaign.Spec
			var raw []byte
			var err error
			if len(args) == 1 {
				spec, raw, err = readSpec(args[0])
			} else {
				raw = labCampaignYAML(lf, sizes, rates, search, resolution, minRate, maxRate, duration, pattern, backend, lossGoal, threads)
				if spec, err = campaign.Parse(raw); err != nil {
					err = usageError{err}
				}
			}
			if err != nil {
				return err
			}
			if lf.spec.ShapeBPS > 0 && spec.Shortfall != "fail" {
				// The shaped path pushes back (see above), also for a spec file.
				a.log.Info("--shape: a trial whose senders were slowed fails", "shortfall", "fail", "spec", spec.Shortfall)
				spec.Shortfall = "fail"
			}
			return a.labCampaign(cmd.Context(), lf, spec, raw, out)
		},
	}
	lf.register(cmd.Flags(), fmt.Sprintf("cmp%d", os.Getpid()%10000))
	out.register(cmd.Flags(), "progress events")
	fl := cmd.Flags()
	fl.StringSliceVar(&sizes, "sizes", []string{"64", "512", "1518"}, "frame sizes including FCS")
	fl.StringSliceVar(&rates, "rates", nil, "offered rates per flow for a sweep (--search none): pps or % of line rate")
	fl.StringVar(&search, "search", "rfc2544", "rfc2544, ndr-pdr or none")
	fl.Float64Var(&lossGoal, "loss-goal", 0, "rfc2544: the highest loss ratio that passes")
	fl.StringVar(&resolution, "resolution", "1%", "search resolution: pps or % of line rate")
	fl.StringVar(&minRate, "min-rate", "1%", "search lower bound")
	fl.StringVar(&maxRate, "max-rate", "100%", "search upper bound")
	fl.StringVar(&duration, "trial-duration", "1s", "duration of each trial")
	fl.StringVar(&pattern, "pattern", "pairwise", "pairwise, fan-in, fan-out or mesh")
	fl.StringVar(&backend, "backend", "auto", "sender backend")
	fl.IntVar(&threads, "threads", 0, "sender threads per flow")
	return cmd
}

// labCampaignYAML writes the spec the flags describe (it is stored with
// the result as given).
func labCampaignYAML(lf *labFlags, sizes, rates []string, search, resolution, minRate, maxRate, duration, pattern, backend string, lossGoal float64, threads int) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "name: lab %s\nagents:\n  senders: [%s]\n  receivers: [%s]\n", lf.name, names("s", lf.senders), names("r", lf.receivers))
	fmt.Fprintf(&b, "pattern: %s\nframe_sizes: [%s]\nthreads: %d\nbackend: %s\ntrial_duration: %s\n", pattern, strings.Join(sizes, ", "), threads, backend, duration)
	if len(rates) > 0 {
		fmt.Fprintf(&b, "rates: [%s]\n", strings.Join(rates, ", "))
	}
	fmt.Fprintf(&b, "search:\n  type: %s\n", search)
	if search != campaign.SearchNone {
		fmt.Fprintf(&b, "  loss_goal: %g\n  resolution: %q\n  min_rate: %q\n  max_rate: %q\n", lossGoal, resolution, minRate, maxRate)
	}
	fmt.Fprintf(&b, "between_trials:\n  pause: 200ms\ndrain: 300ms\n")
	if lf.spec.ShapeBPS > 0 {
		b.WriteString("shortfall: fail\n")
	}
	return []byte(b.String())
}

func (a *app) labCampaign(ctx context.Context, lf *labFlags, spec *campaign.Spec, raw []byte, out *outputFlags) error {
	sess, err := a.labStart(ctx, lf)
	if sess != nil {
		defer sess.down(a)
	}
	if err != nil {
		return err
	}
	coord := &coordinator.Runner{Cluster: sess.cluster, Dial: sess.dial, ID: "lab-" + lf.name, Log: a.log.Named("run")}
	r := &campaign.Runner{Cluster: sess.cluster, Run: func(ctx context.Context, cs coordinator.Spec) (*coordinator.Result, error) {
		return sess.measure(func() (*coordinator.Result, error) { return coord.Run(ctx, cs) })
	}}
	if shape := lf.spec.ShapeBPS; shape > 0 {
		// tbf counts the frame without FCS: that is the path's line rate.
		r.LineRatePPS = func(frame float64) float64 { return float64(shape) / 8 / (frame - coordinator.FCSBytes) }
	}
	return a.campaign(ctx, r, spec, raw, out)
}
