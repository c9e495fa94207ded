//go:build linux

package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/linerate/linerate/coordinator"
	"github.com/linerate/linerate/coordinator/campaign"
	"github.com/linerate/linerate/coordinator/results"
	"github.com/linerate/linerate/coordinator/search"
	"github.com/linerate/linerate/internal/enum"
	"github.com/linerate/linerate/pktgen"
)

// labCampaignFlags describe a campaign without a spec file.
type labCampaignFlags struct {
	sizes, rates                           []string
	resolution, maxRate, minRate, duration string
	search                                 search.Type
	pattern                                coordinator.Pattern
	backend                                pktgen.BackendName
	lossGoal                               float64
	threads                                int
	ipv6                                   bool
	vlan                                   int
}

func (f *labCampaignFlags) register(fl *pflag.FlagSet) {
	fl.StringSliceVar(&f.sizes, "sizes", []string{"64", "512", "1518"}, "frame sizes including FCS")
	fl.StringSliceVar(&f.rates, "rates", nil, "offered rates per flow for a sweep (--search none): pps or % of line rate")
	fl.StringVar((*string)(&f.search), "search", string(search.TypeRFC2544), enum.Or(enum.Explain(search.Types, search.Type.Meaning)))
	fl.Float64Var(&f.lossGoal, "loss-goal", 0, "rfc2544: the highest loss ratio that passes")
	fl.StringVar(&f.resolution, "resolution", "1%", "search resolution: pps or % of line rate")
	fl.StringVar(&f.minRate, "min-rate", "1%", "search lower bound")
	fl.StringVar(&f.maxRate, "max-rate", "100%", "search upper bound")
	fl.StringVar(&f.duration, "trial-duration", "1s", "duration of each trial")
	fl.StringVar((*string)(&f.pattern), "pattern", string(coordinator.Pairwise), enum.Or(coordinator.Patterns))
	fl.StringVar((*string)(&f.backend), "backend", string(pktgen.BackendAuto), "sender backend: "+enum.Or(pktgen.BackendNames))
	fl.IntVar(&f.threads, "threads", 0, "sender threads per flow")
	fl.BoolVar(&f.ipv6, "ipv6", false, "every trial over IPv6: the lab's hosts' 2001:2::/48 addresses (sizes from 82 B)")
	fl.IntVar(&f.vlan, "vlan", 0, "tag every frame with this 802.1Q VLAN id (1-4094), which the lab's agents allow; sizes count the tag")
}

// spec builds the campaign the flags describe on lab lf (its agents
// s1…, r1…); record is the spec as given, stored with the result.
func (f *labCampaignFlags) spec(lf *labFlags) (spec *campaign.Spec, record []byte, err error) {
	o := campaign.Options{
		Name: "lab " + lf.name, Senders: lf.spec.SenderNames(), Receivers: lf.spec.ReceiverNames(),
		Pattern: f.pattern, Search: f.search, Backend: f.backend, Threads: f.threads,
		// Short pauses: the lab's queues drain in milliseconds.
		Pause: 200 * time.Millisecond, Drain: 300 * time.Millisecond,
		Shortfall: lf.spec.Shortfall(""), IPv6: f.ipv6, VLAN: f.vlan,
	}
	for _, s := range f.sizes {
		z, err := campaign.ParseSize(s)
		if err != nil {
			return nil, nil, usagef("--sizes: %v", err)
		}
		o.Sizes = append(o.Sizes, z)
	}
	for _, s := range f.rates {
		r, err := campaign.ParseRate(s)
		if err == nil {
			err = r.Check(f.threads)
		}
		if err != nil {
			return nil, nil, usagef("--rates %q: %v", s, err)
		}
		o.Rates = append(o.Rates, r)
	}
	if o.Duration, err = time.ParseDuration(f.duration); err != nil {
		return nil, nil, usagef("--trial-duration %q: want a Go duration such as 500ms, 10s, 1m30s", f.duration)
	}
	if f.search != search.TypeNone {
		o.LossGoal = f.lossGoal
		for _, b := range []struct {
			flag, value string
			rate        *campaign.Rate
			threads     int // a step, not a rate per thread: 0
		}{{"--resolution", f.resolution, &o.Resolution, 0}, {"--min-rate", f.minRate, &o.Min, f.threads}, {"--max-rate", f.maxRate, &o.Max, f.threads}} {
			if *b.rate, err = campaign.ParseRate(b.value); err == nil {
				err = b.rate.Check(b.threads)
			}
			if err != nil {
				return nil, nil, usagef("%s %q: %v", b.flag, b.value, err)
			}
		}
	}
	if spec, record, err = campaign.FromOptions(o); err != nil {
		return nil, nil, usageError{err}
	}
	return spec, record, nil
}

func (a *app) labCampaignCommand() *cobra.Command {
	lf := &labFlags{}
	out := &outputFlags{}
	cf := &labCampaignFlags{}
	var resume string
	cmd := &cobra.Command{
		Use:   "campaign [SPEC.yaml | --resume ID] [--sizes 64,512,1518] [--search " + enum.Usage(search.Types) + "] [--shape RATE] [--json] [--html FILE]",
		Short: "Build a lab and run a campaign on it (a spec file, or one from the flags)",
		Long: `lab campaign builds the lab (as lab run does), runs a campaign on its agents
and removes the lab. With SPEC.yaml the spec is the one 'campaign run'
takes (its agents are the lab's s1…, r1…); without, the flags make one.
With --shape the line rate that rates in % and the search bounds refer to
is the shaped rate (tbf counts frames without FCS), and a trial whose
senders were slowed below the offered rate fails (the shaped path pushed
back on the senders) instead of being invalid.

--resume ID continues the stored campaign ID (interrupted, or killed:
see 'campaign resume') in a new lab: give the lab flags it ran with
(--senders, --receivers, --shape, …); a lab whose line rate differs
asks for other rates than the stored trials, and the resume is refused
with the document left as it was. A killed 'lab campaign' leaves its
lab: 'linerate lab down --name NAME' removes it first.`,
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
			var stored *results.Document
			var err error
			switch {
			case resume != "" && len(args) == 1:
				return usagef("--resume %s: the stored campaign has its spec: give no SPEC.yaml", resume)
			case resume != "":
				stored, spec, err = resumable(out.dir, resume, false)
			case len(args) == 1:
				spec, raw, err = readSpec(args[0])
			default:
				spec, raw, err = cf.spec(lf)
			}
			if err != nil {
				return err
			}
			if spec.VLAN != 0 {
				// The switch carries the campaign's tag.
				lf.vlan = spec.VLAN
				if err := lf.check(); err != nil {
					return err
				}
			}
			if sf := lf.spec.Shortfall(spec.Shortfall); sf != spec.Shortfall {
				// The shaped path pushes back, also for a spec file.
				a.log.Info("--shape: a trial whose senders were slowed fails", "shortfall", sf, "spec", spec.Shortfall)
				spec.Shortfall = sf
			}
			return a.labCampaign(cmd.Context(), lf, spec, raw, out, stored)
		},
	}
	lf.register(cmd.Flags(), fmt.Sprintf("cmp%d", os.Getpid()%10000))
	out.register(cmd.Flags(), "progress events")
	cf.register(cmd.Flags())
	cmd.Flags().StringVar(&resume, "resume", "", "continue the stored campaign ID in a new lab built from these lab flags (as 'campaign resume')")
	return cmd
}

func (a *app) labCampaign(ctx context.Context, lf *labFlags, spec *campaign.Spec, raw []byte, out *outputFlags, resume *results.Document) error {
	s, err := a.openLab(ctx, lf)
	if err != nil {
		return err
	}
	defer a.closeLab(s)
	coord := s.Runner()
	coord.Log = a.log.Named("run")
	r := &campaign.Runner{Cluster: s.Cluster, LineRate: lf.spec.LineRate(), Run: func(ctx context.Context, cs coordinator.Spec) (*coordinator.Result, error) {
		var err error
		if cs.XmitMode, err = lf.spec.XmitMode(cs.XmitMode); err != nil {
			return nil, err
		}
		return s.Measure(func() (*coordinator.Result, error) { return coord.Run(ctx, cs) })
	}}
	return a.campaign(ctx, r, spec, raw, out, resume)
}
