package coordinator

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/linerate/linerate/internal/cluster/gossip"
)

// Membership is what a run needs of the cluster: who is there now, and
// news of members that fail or leave. *Cluster is one.
type Membership interface {
	Members() []Member
	Subscribe() (<-chan Event, func())
}

// Runner drives runs.
type Runner struct {
	Cluster Membership
	Dial    Dialer
	Log     hclog.Logger
	// ID names this coordinator in the agents' leases.
	ID string
	// OnSample and OnPhase, when set, receive live samples and phase
	// changes (from several goroutines: they must be safe for that).
	OnSample func(Sample)
	OnPhase  func(PhaseEvent)
	// CallTimeout bounds each unary call (default 30 s; Tune may take a
	// while on a NIC with many queues).
	CallTimeout time.Duration
}

// Phases of a run, in order.
const (
	PhaseDiscover  = "discover"
	PhaseDescribe  = "describe"
	PhaseLease     = "lease"
	PhaseTune      = "tune"
	PhaseArm       = "arm"
	PhaseConfigure = "configure"
	PhaseStart     = "start"
	PhaseRun       = "run"
	PhaseStop      = "stop"
	PhaseDrain     = "drain"
	PhaseCollect   = "collect"
	PhaseReconcile = "reconcile"
	PhaseRestore   = "restore"
)

// Run performs one run: lease → tune → arm → scheduled start → watch →
// stop → drain → collect → reconcile → restore → release. Whatever
// happens (a failed agent, ctx cancelled), every agent that was leased is
// stopped, restored and released before Run returns. The returned error
// is only for a spec that cannot run at all; a run that failed midway
// returns its Result with Status failed and Error naming agent and phase.
func (r *Runner) Run(ctx context.Context, spec Spec) (*Result, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	pairs, _ := spec.FlowPairs() // Validate checked them
	if r.Log == nil {
		r.Log = hclog.NewNullLogger()
	}
	if r.CallTimeout == 0 {
		r.CallTimeout = 30 * time.Second
	}
	if r.ID == "" {
		r.ID = "coordinator"
	}
	st := &runState{
		r: r, spec: spec, pairs: pairs, nodes: map[string]*node{},
		res: &Result{RunID: newRunID(), Pattern: spec.Pattern, FrameSize: spec.FrameSize, IMIX: spec.IMIX, RatePPS: spec.Rate, Latency: spec.Latency, Started: time.Now().UTC()},
	}
	if c := spec.Copies(); c > 1 {
		st.res.Copies = c
	}
	if spec.Burst > 1 {
		st.res.Burst = spec.Burst
	}
	st.log = r.Log.With("run", st.res.RunID)
	st.phase.Store(PhaseDiscover)

	runCtx, cancel := context.WithCancelCause(ctx)
	st.cancel = cancel
	defer cancel(nil)

	err := st.run(runCtx)
	if err == nil {
		err = context.Cause(runCtx) // a failure noticed as the run ended
	}
	st.cleanup()
	st.finish(err)
	return st.res, nil
}

// run is the phase sequence; each phase is a method in a file of its own
// (see the package doc), and cleanup undoes what it did.
func (st *runState) run(ctx context.Context) error {
	if err := st.discover(); err != nil {
		return err
	}
	// What runs beside the phases (membership events, lease renewal, the
	// watchers) ends with them: none of it renews a lease cleanup is
	// releasing, reports a sample, or fails a run that has ended.
	var bg sync.WaitGroup
	ctx, stopBG := context.WithCancel(ctx)
	defer bg.Wait()
	defer stopBG()
	events, unsubscribe := st.r.Cluster.Subscribe()
	defer unsubscribe()
	bg.Go(func() { st.failOnMemberLoss(ctx, events) })

	st.setPhase(PhaseDescribe)
	if err := st.each(ctx, st.order, st.describe); err != nil {
		return err
	}
	if err := st.each(ctx, st.withRole(gossip.RoleSender), st.checkThreads); err != nil {
		return err
	}
	if err := st.each(ctx, st.withRole(gossip.RoleSender), st.checkRTT); err != nil {
		return err
	}
	if err := st.each(ctx, st.withRole(gossip.RoleReceiver), st.checkMemory); err != nil {
		return err
	}
	if err := st.each(ctx, st.order, st.preflight); err != nil {
		return err
	}
	if err := st.judgePreflight(); err != nil {
		return err
	}
	st.setPhase(PhaseLease)
	if err := st.each(ctx, st.order, st.acquire); err != nil {
		return err
	}
	bg.Go(func() { st.renew(ctx) })
	st.setPhase(PhaseTune)
	if err := st.each(ctx, st.order, st.tune); err != nil {
		return err
	}
	st.setPhase(PhaseArm)
	if err := st.each(ctx, st.order, st.measureClock(false)); err != nil {
		return err
	}
	if err := st.each(ctx, st.withRole(gossip.RoleReceiver), st.arm); err != nil {
		return err
	}
	st.setPhase(PhaseConfigure)
	if err := st.each(ctx, st.withRole(gossip.RoleSender), st.configure); err != nil {
		return err
	}
	watchCtx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	for _, n := range st.order {
		bg.Go(func() { st.watch(watchCtx, n) })
	}
	st.setPhase(PhaseStart)
	if err := st.start(ctx); err != nil {
		return err
	}
	st.setPhase(PhaseRun)
	if err := st.wait(ctx); err != nil {
		return err
	}
	st.setPhase(PhaseDrain)
	select {
	case <-time.After(st.spec.Drain):
	case <-ctx.Done():
		return context.Cause(ctx)
	}
	st.setPhase(PhaseCollect)
	if err := st.each(ctx, st.withRole(gossip.RoleReceiver), st.collect); err != nil {
		return err
	}
	if err := st.each(ctx, st.order, st.measureClock(true)); err != nil {
		return err
	}
	if err := st.each(ctx, st.order, st.reread); err != nil {
		return err
	}
	st.rereadWarnings()
	stopWatch()
	st.setPhase(PhaseReconcile)
	st.reconcile()
	return nil
}

// failOnMemberLoss fails the run at once when one of its members fails
// or leaves the cluster.
func (st *runState) failOnMemberLoss(ctx context.Context, events <-chan Event) {
	for {
		select {
		case e := <-events:
			if n := st.nodes[e.Member.Name]; n != nil {
				switch e.Type {
				case gossip.EventFailed:
					st.lost(n, errors.New("failed (no longer answers gossip)"))
				case gossip.EventLeave:
					st.lost(n, errors.New("left the cluster"))
				}
			}
		case <-ctx.Done():
			return
		}
	}
}
