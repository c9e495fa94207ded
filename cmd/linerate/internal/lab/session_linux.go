//go:build linux

package lab

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/linerate/linerate/coordinator"
	"github.com/linerate/linerate/coordinator/campaign"
	"github.com/linerate/linerate/coordinator/results"
	"github.com/linerate/linerate/internal/cluster/gossip"
	"github.com/linerate/linerate/internal/cluster/mtls"
	"github.com/linerate/linerate/pktgen"
)

// Options open a Session.
type Options struct {
	Spec Spec // the lab to build (Spec.Mgmt is implied: the agents need it)
	// Agents start the lab's agents; Binary defaults to this executable
	// and Ready (also the wait for the cluster to form) to 20 s.
	Agents AgentOptions
	Log    hclog.Logger
}

// Session is a lab with its agents running and the calling process
// joined to their cluster as the coordinator: what `linerate lab run`,
// `lab up` and `lab campaign` drive.
type Session struct {
	Lab *Lab
	// Agents is how a coordinator reaches the lab's agents (the flags
	// `lab up` prints).
	Agents  *Cluster
	Cluster *coordinator.Cluster // nil after Leave
	Dial    coordinator.Dialer
	log     hclog.Logger
}

// ExistsError is Open's refusal of a lab whose namespaces exist already
// (a killed lab that `linerate lab down` removes).
type ExistsError struct {
	Name      string // the lab
	Namespace string // one of its namespaces
}

func (e *ExistsError) Error() string {
	return fmt.Sprintf("lab %s exists already (namespace %s): remove it with 'linerate lab down --name %s'", e.Name, e.Namespace, e.Name)
}

// Open builds the lab o.Spec describes, starts its agents and joins
// their cluster, returning once every agent is alive in it. On error
// everything made so far is removed.
func Open(ctx context.Context, o Options) (s *Session, err error) {
	if o.Log == nil {
		o.Log = hclog.NewNullLogger()
	}
	if o.Agents.Ready == 0 {
		o.Agents.Ready = 20 * time.Second
	}
	o.Spec.Mgmt = true
	if os.Geteuid() != 0 {
		return nil, fmt.Errorf("lab: needs root (network namespaces, XDP, qdiscs)")
	}
	left, err := Leftovers()
	if err != nil {
		return nil, fmt.Errorf("lab: %w", err)
	}
	for _, n := range left {
		if strings.HasPrefix(n, Prefix(o.Spec.Name)) {
			return nil, &ExistsError{Name: o.Spec.Name, Namespace: n}
		}
	}
	if o.Agents.Binary == "" {
		if o.Agents.Binary, err = os.Executable(); err != nil {
			return nil, fmt.Errorf("lab: find the linerate binary for the agents: %w", err)
		}
	}
	if o.Spec.Hosts == HostsVM {
		if err := o.Spec.Validate(); err != nil {
			return nil, err
		}
		// Everything a VM host needs is checked before anything is built.
		if o.Agents.Kernel, err = vmPrerequisites(ctx, o.Agents, o.Log); err != nil {
			return nil, fmt.Errorf("lab %s: %w", o.Spec.Name, err)
		}
	} else if len(o.Agents.GuestFiles) > 0 {
		return nil, fmt.Errorf("lab %s: guest files %s: only VM hosts have files of their own (hosts %s share this machine's)", o.Spec.Name, strings.Join(o.Agents.GuestFiles, ", "), o.Spec.Hosts)
	}
	l, err := Up(o.Spec, o.Log)
	if err != nil {
		return nil, err
	}
	s = &Session{Lab: l, log: o.Log}
	defer func() {
		if err != nil {
			if cerr := s.Close(); cerr != nil {
				o.Log.Error("lab down", "error", cerr)
			}
			s = nil
		}
	}()
	if s.Agents, err = l.StartAgents(ctx, o.Agents); err != nil {
		return s, err
	}
	if err = s.join(ctx); err != nil {
		return s, err
	}
	want := len(l.Hosts())
	if _, err := s.Cluster.WaitAlive(ctx, want, o.Agents.Ready); err != nil {
		return s, fmt.Errorf("lab %s: %w", o.Spec.Name, err)
	}
	o.Log.Info("lab ready", "lab", o.Spec.Name, "agents", want, "dir", s.Agents.Dir)
	return s, nil
}

// join makes the calling process a member of the agents' cluster, with
// the coordinator's certificate the lab issued. It joins every agent, not
// one seed: the lab knows them all, and an agent whose own join is still
// backing off (a loaded machine, many agents) is then a member at once,
// and again at each of the wait's refreshes, instead of when its next
// retry comes.
func (s *Session) join(ctx context.Context) error {
	c := s.Agents
	key, err := gossip.ReadKey(c.GossipKey)
	if err != nil {
		return fmt.Errorf("lab %s: gossip key: %w", s.Lab.Spec.Name, err)
	}
	cl, err := coordinator.JoinCluster(ctx, coordinator.ClusterConfig{
		Bind: c.Bind, Join: c.Join, GossipKey: key, Logger: s.log.Named("cluster"),
	})
	if err != nil {
		return fmt.Errorf("coordinator: %w", err)
	}
	s.Cluster = cl
	s.Dial = coordinator.TLSDialer(mtls.Options{Dir: c.TLSDir, Name: CoordinatorCert})
	return nil
}

// Runner is a coordinator for one run on the session's agents.
func (s *Session) Runner() *coordinator.Runner {
	return &coordinator.Runner{Cluster: s.Cluster, Dial: s.Dial, ID: "lab-" + s.Lab.Spec.Name}
}

// Measure performs one run and adds to its result what the switch
// counted while it ran (Result.Lab), each direction's drops apart in a
// run that turns flows round.
func (s *Session) Measure(run func() (*coordinator.Result, error)) (*coordinator.Result, error) {
	base, err := s.Lab.Truth()
	if err != nil {
		return nil, err
	}
	res, err := run()
	if err != nil {
		return nil, err
	}
	after, err := s.Lab.Truth()
	if err != nil {
		return nil, err
	}
	t := after.Sub(base)
	t.SplitDirections(res.Directions)
	res.Lab = &t
	return res, nil
}

// Leave takes the calling process out of the agents' cluster; the lab
// and its agents stay until Close.
func (s *Session) Leave() {
	if s.Cluster == nil {
		return
	}
	if err := s.Cluster.Close(); err != nil {
		s.log.Warn("leave the lab cluster", "error", err)
	}
	s.Cluster = nil
}

// WriteUp says, for people, that the lab is up and how to reach its
// agents (`lab up`): the flags of 'linerate members' and 'linerate run'.
func (s *Session) WriteUp(w io.Writer) error {
	spec, c := s.Lab.Spec, s.Agents
	flags := fmt.Sprintf("--join %s --bind %s --gossip-key %s --tls-dir %s", c.Join[0], c.Bind, c.GossipKey, c.TLSDir)
	fmt.Fprintf(w, "lab %s up: %d senders (s1…), %d receivers (r1…); directory %s\n", spec.Name, spec.Senders, spec.Receivers, c.Dir)
	fmt.Fprintf(w, "  linerate members %s\n", flags)
	xmit := ""
	if !spec.Delay.IsZero() {
		// The delay is netem on the senders: a run passes it only
		// with its frames queued to the interface.
		fmt.Fprintf(w, "  every sender's data interface delays by %s (netem): a run with --xmit-mode %s passes it, one without passes it by\n", spec.Delay, pktgen.XmitQueue)
		xmit = " --xmit-mode " + string(pktgen.XmitQueue)
	}
	fmt.Fprintf(w, "  linerate run %s --senders %s --receivers %s --duration 3s%s\n", flags,
		strings.Join(spec.SenderNames(), ","), strings.Join(spec.ReceiverNames(), ","), xmit)
	_, err := fmt.Fprintln(w, "Ctrl-C removes the lab.")
	return err
}

// Close leaves the cluster, stops the agents and removes the lab.
func (s *Session) Close() error {
	s.Leave()
	return s.Lab.Down()
}

// Shortfall is what a campaign on the lab makes of a trial whose senders
// fell short of the offered rate (campaign Spec.Shortfall), given the
// campaign's own choice: campaign.ShortfallFail behind the shaper of a lab of namespace
// hosts, else given. There a veth path pushes back on its sender where
// the host kernel keeps the socket's accounting across it: the lab then
// slows the senders and loses nothing, so a trial the senders fell short
// of is the shaper's verdict (where the kernel does not, the port drops
// and the loss decides as well). A VM host's tap never pushes back into
// its guest: the switch port drops, and loss alone decides.
func (spec Spec) Shortfall(given campaign.Shortfall) campaign.Shortfall {
	if spec.ShapeBPS > 0 && spec.Hosts != HostsVM {
		return campaign.ShortfallFail
	}
	return given
}

// XmitMode is the xmit mode of kernel pktgen for a run on the lab, given
// the run's own (given; "" for none): with a delay, queue_xmit, so that
// every frame passes the senders' netem (start_xmit, which passes it
// by, is refused); without one, given.
func (spec Spec) XmitMode(given pktgen.XmitMode) (pktgen.XmitMode, error) {
	if spec.Delay.IsZero() {
		return given, nil
	}
	if given != "" && given != pktgen.XmitQueue {
		return "", fmt.Errorf("xmit mode %s with the lab's delay %s: its frames would pass the senders' netem by; want %s (the default with a delay)", given, spec.Delay, pktgen.XmitQueue)
	}
	return pktgen.XmitQueue, nil
}

// LineRate is the line rate of the lab's path in frames per second for
// a frame of frame bytes with FCS, and what sets it: the shaper's when
// the spec shapes (tbf counts the frame without FCS), else nil (the
// links' own).
func (spec Spec) LineRate() func(frame float64) (float64, string) {
	if spec.ShapeBPS == 0 {
		return nil
	}
	shape := spec.ShapeBPS
	basis := fmt.Sprintf("the lab switch port's shaper (%s, tbf: frames without FCS)", results.FormatSI(float64(shape), "b/s"))
	return func(frame float64) (float64, string) {
		return float64(shape) / 8 / (frame - pktgen.FCSBytes), basis
	}
}
