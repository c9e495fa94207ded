package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/linerate/linerate/coordinator"
	"github.com/linerate/linerate/coordinator/report"
	"github.com/linerate/linerate/coordinator/results"
	"github.com/linerate/linerate/internal/enum"
	"github.com/linerate/linerate/latency"
	"github.com/linerate/linerate/pktgen"
	"github.com/linerate/linerate/receiver"
	"github.com/linerate/linerate/topology"
)

// runFlags are the run's shape, shared by `run` and `lab run`.
type runFlags struct {
	senders, receivers []string
	spec               coordinator.Spec
	out                outputFlags
	// udpSrc and queueMap are "A" or "A-B" ranges ("": none).
	udpSrc, queueMap string
}

func (f *runFlags) register(fl *pflag.FlagSet) {
	s := &f.spec
	fl.StringVar((*string)(&s.Pattern), "pattern", string(coordinator.Pairwise), enum.Or(coordinator.Patterns))
	fl.IntVar(&s.FrameSize, "frame-size", 0, fmt.Sprintf("Ethernet frame size in bytes including the FCS and any VLAN tag (%d-%d; from %d with --ipv6, %d with --ipv6 --vlan) (default: the smallest, %d for IPv4)",
		pktgen.MinFrameSize, pktgen.MaxFrameSize, pktgen.MinFrameSizeFor(true, false), pktgen.MinFrameSizeFor(true, true), coordinator.DefaultFrameSize))
	fl.BoolVar(&s.IPv6, "ipv6", false, "send to each receiver's IPv6 data address (its first global or unique-local one, never link-local fe80::/10) from the senders' own")
	fl.IntVar(&s.VLAN, "vlan", 0, "tag every test frame with this 802.1Q VLAN id (1-4094; the sender agents need --allow-vlan); 0: untagged")
	fl.DurationVar(&s.Duration, "duration", 0, "how long every sender sends (or --count)")
	fl.Uint64Var(&s.Count, "count", 0, "packets per flow (or --duration)")
	ppsVar(fl, &s.Rate, "rate", "packets per second per flow, at least 1 per thread (default: as fast as the sender goes)")
	fl.IntVar(&s.Threads, "threads", 0, "sender threads per flow (0: one per NIC queue, or 1 on a virtual device)")
	fl.StringVar((*string)(&s.Backend), "backend", string(pktgen.BackendAuto), "sender backend: "+enum.Or(pktgen.BackendNames))
	fl.StringVar((*string)(&s.XmitMode), "xmit-mode", "", "kernel pktgen's xmit mode: "+string(pktgen.XmitStart)+" (default: past the senders' qdiscs) or "+string(pktgen.XmitQueue)+" (through them: a VM lab's --delay)")
	fl.IntVar(&s.Burst, "burst", 1, "kernel pktgen: packets per transmit call, the same frame each time (xmit_more; the receivers count the copies, not as duplicates; --count a multiple of it; a burst pktgen cuts short when the queue stops makes the next frame's copies look like duplicates, so every copy counts as received); devices without skb sharing (veth) refuse > 1")
	fl.IntVar(&s.CloneSkb, "clone-skb", 0, "kernel pktgen: send each built frame this many times (0 and 1: once; counted as --burst's copies are)")
	fl.StringVar(&f.udpSrc, "udp-src", "", "UDP source port or range A-B every stream walks (default pktgen's 9): a receiver's RSS then spreads each stream over its queues")
	fl.StringVar(&f.queueMap, "queue-map", "", "kernel pktgen: TX queue or range A-B every sender thread sends on in turn (default: the queue its CPU serves)")
	fl.BoolVar(&s.NodeAlloc, "node-alloc", false, "kernel pktgen: allocate the frames on the NUMA node of each sender's NIC (refused where the NIC has none)")
	fl.StringVar((*string)(&s.NeedWakeup), "need-wakeup", string(pktgen.NeedWakeupAuto), "need_wakeup of the AF_XDP sockets, the afxdp backend's and the afxdp method's: "+enum.Or(pktgen.NeedWakeups)+" (auto: on for a physical NIC, off for a virtual device)")
	fl.StringVar((*string)(&s.Method), "method", string(receiver.MethodAuto), "receiver method: "+enum.Or(receiver.Methods))
	fl.DurationVar(&s.Drain, "drain", coordinator.DefaultDrain, "wait after the senders stop before the receivers are read")
	fl.DurationVar(&s.LeaseTTL, "lease-ttl", coordinator.DefaultLeaseTTL, "lease on each agent; an agent restores itself when it runs out")
	fl.BoolVar(&s.KeepTuning, "keep-tuning", false, "leave the IRQ affinities applied after the run")
	fl.BoolVar(&s.NoTune, "no-tune", false, "do not touch IRQ affinities")
	fl.StringVar((*string)(&s.IRQBalance), "irqbalance", string(topology.IRQBalanceRefuse), "when irqbalance runs: "+irqbalanceHelp)
	fl.BoolVar(&s.Bidir, "bidir", false, "every pair sends both ways at once: every host sends and receives (agents of role both); flows and totals per direction")
	fl.BoolVar(&s.Reverse, "reverse", false, "the receivers send to the senders (the pattern's pairs turned round; flows marked reverse)")
	fl.StringVar((*string)(&s.Latency), "latency", string(coordinator.LatencyOneWay), "what to time: "+enum.Or(coordinator.LatencyModes)+
		" (oneway: every packet at its receiver; rtt: round trips too, of a latency stream the receivers reflect, on each sender's own clock; off: nothing)")
	fl.Uint64Var(&s.RTTRate, "rtt-rate", latency.DefaultRTTRate, fmt.Sprintf("packets per second of each flow's latency stream with --latency rtt, 1 to %d", latency.MaxRTTRate))
	fl.StringVar((*string)(&s.Preflight), "preflight", string(coordinator.PreflightWarn), "what to do with the hosts' checks (linerate doctor), made by every agent before any lease: "+enum.Or(coordinator.Preflights)+
		" (warn: every WARN and FAIL a warning of the result; strict: refuse to start on a FAIL; fix: apply the fixes the agents' --allow-fixes allow, restored after the run)")
	f.out.register(fl, "events (phases, live samples)")
}

func (a *app) runCommand() *cobra.Command {
	f := &runFlags{}
	cf := &clusterFlags{}
	cmd := &cobra.Command{
		Use:   "run --join HOST:PORT --senders A,B --receivers C,D (--duration D | --count N) [flags]",
		Short: "Drive agents through one run and reconcile sent, received and lost",
		Long: `run finds the named agents in the gossip cluster, leases them, pins both
ends' queue IRQs to CPUs on the NIC's NUMA node, arms the receivers, starts
every sender at one scheduled instant, watches live counters, stops, drains,
collects, reconciles every flow to the packet, restores every host and
releases it. A member that fails or leaves fails the run, naming it and the
phase; the other hosts are restored. Exit status 0 only when the run is ok.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f.spec.Senders, f.spec.Receivers = f.senders, f.receivers
			return a.runCmd(cmd.Context(), cf, f)
		},
	}
	cf.register(cmd, a)
	f.register(cmd.Flags())
	cmd.Flags().StringSliceVar(&f.senders, "senders", nil, "sender agents (serf node names)")
	cmd.Flags().StringSliceVar(&f.receivers, "receivers", nil, "receiver agents (serf node names)")
	return cmd
}

// check refuses what the flags cannot run, naming the flags.
func (f *runFlags) check() error {
	if err := f.out.check(); err != nil {
		return err
	}
	if f.spec.RTTRate == 0 {
		return usagef("--rtt-rate 0: want 1 to %d packets per second", latency.MaxRTTRate)
	}
	var err error
	if f.udpSrc != "" {
		if f.spec.UDPSrcMin, f.spec.UDPSrcMax, err = portRange("--udp-src", f.udpSrc); err != nil {
			return err
		}
	}
	if f.queueMap != "" {
		f.spec.HasQueueMap = true
		if f.spec.QueueMapMin, f.spec.QueueMapMax, err = numRange("--queue-map", f.queueMap, "queue", 65535); err != nil {
			return err
		}
	}
	return checkRateFlags(f.spec.Rate, f.spec.Threads)
}

func (a *app) runCmd(ctx context.Context, cf *clusterFlags, f *runFlags) error {
	if err := f.check(); err != nil {
		return err
	}
	spec := f.spec
	if err := spec.Validate(); err != nil {
		return usageError{fmt.Errorf("run: %w", err)}
	}
	cl, dial, err := cf.open(ctx, a, append(slices.Clone(spec.Senders), spec.Receivers...)...)
	if err != nil {
		return err
	}
	defer cl.Close()
	host, _ := os.Hostname()
	res, err := a.drive(ctx, &coordinator.Runner{Cluster: cl, Dial: dial, ID: host}, spec, f)
	if err != nil {
		return err
	}
	return a.report(res, f)
}

// drive runs spec with the live display f asks for.
func (a *app) drive(ctx context.Context, r *coordinator.Runner, spec coordinator.Spec, f *runFlags) (*coordinator.Result, error) {
	r.Log = a.log.Named("run")
	var live *liveView
	switch {
	case f.out.jsonStream:
		enc := &ndjson{w: a.stdout}
		r.OnSample = func(s coordinator.Sample) { enc.write(s) }
		r.OnPhase = func(p coordinator.PhaseEvent) { enc.write(p) }
	case isTerminal(a.stderr):
		live = newLiveView(a.stderr)
		r.OnSample = live.sample
		defer live.close()
	}
	res, err := r.Run(ctx, spec)
	if err != nil {
		return nil, usageError{fmt.Errorf("run: %w", err)}
	}
	return res, nil
}

// report stores res, prints it as f asks (with the path's own counts
// when it has them: the lab's switch) and turns a failed run, or a
// record that could not be stored, into exit status 1.
func (a *app) report(res *coordinator.Result, f *runFlags) error {
	doc := results.RunDocument(res, version)
	// Printed whatever the store says: a store that fails must not take
	// the answer with it.
	serr := a.store(&f.out, doc)
	if err := a.emitResult(&ndjson{w: a.stdout}, f.out.jsonStream, f.out.json, res, func(w io.Writer) {
		_ = report.RunTable(w, res)
		if res.Lab != nil {
			_ = report.PathTruthTable(w, res.Lab)
		}
	}); err != nil {
		return errors.Join(err, serr)
	}
	var rerr error
	if res.Status != coordinator.StatusOK {
		rerr = fmt.Errorf("run %s %s: %s", res.RunID, res.Status, res.Error)
	}
	return errors.Join(rerr, serr)
}

// emitResult prints a final result: as the last NDJSON event (`"event":
// "result"` and v's fields), as indented JSON, or with text.
func (a *app) emitResult(stream *ndjson, asStream, asJSON bool, v any, text func(io.Writer)) error {
	switch {
	case asStream:
		ev, err := coordinator.ResultEvent(v)
		if err != nil {
			return err
		}
		stream.write(ev)
	case asJSON:
		return a.writeJSON(v)
	default:
		text(a.stdout)
	}
	return nil
}

type ndjson struct {
	mu sync.Mutex
	w  io.Writer
}

func (n *ndjson) write(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.w.Write(append(b, '\n'))
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// liveView redraws one status line per second on a terminal: every
// agent's packet rate.
type liveView struct {
	w    io.Writer
	mu   sync.Mutex
	last map[string]coordinator.Sample
	stop chan struct{}
	done chan struct{}
}

func newLiveView(w io.Writer) *liveView {
	v := &liveView{w: w, last: map[string]coordinator.Sample{}, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(v.done)
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-v.stop:
				fmt.Fprint(w, "\r\033[K")
				return
			case <-t.C:
				v.draw()
			}
		}
	}()
	return v
}

func (v *liveView) sample(s coordinator.Sample) {
	v.mu.Lock()
	// By agent and role: a host that sends and receives (--bidir) gives
	// a sample of each.
	v.last[s.Agent+" "+s.Role] = s
	v.mu.Unlock()
}

func (v *liveView) draw() {
	v.mu.Lock()
	defer v.mu.Unlock()
	fmt.Fprintf(v.w, "\r\033[K%s", report.SampleLine(v.last))
}

func (v *liveView) close() {
	close(v.stop)
	<-v.done
}
