package agent

import (
	"context"
	"errors"
	"math"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/serf/serf"

	"github.com/linerate/linerate/doctor"
	"github.com/linerate/linerate/doctor/live"
	"github.com/linerate/linerate/pktgen"
	lineratev1 "github.com/linerate/linerate/proto/linerate/v1"
	"github.com/linerate/linerate/receiver"
	"github.com/linerate/linerate/topology"
)

// service is the agent's work, put together from its parts: the
// inventory, the lease, the tuning, the receiver, the sender and the watch.
// Its methods here are the operations a coordinator calls, each checking
// the lease as it must; grpc.go serves them as lineratev1.AgentServer.
type service struct {
	lineratev1.UnimplementedAgentServer
	cfg *Config
	log hclog.Logger

	base   context.Context // cancelled at shutdown
	cancel context.CancelFunc

	metrics *metrics
	changes *changes
	inv     *inventory
	leases  *leases
	tuner   *tuner
	pre     *preflight
	mgmt    *mgmtRail
	gate    *tuneGate // serialises tune and restore
	conf    *configurer
	rx      *receiving
	tx      *sending
	watcher *watcher
}

// newService wires the agent's parts; members are the serf members the
// agent sees (the receivers a sender may send to).
func newService(cfg *Config, root *topology.DirRoot, log hclog.Logger, members func() []serf.Member) *service {
	ctx, cancel := context.WithCancel(context.Background())
	thread := nsThread{init: cfg.ThreadInit}
	s := &service{cfg: cfg, log: log, base: ctx, cancel: cancel, changes: newChanges()}
	s.inv = &inventory{root: root, iface: cfg.Iface, role: cfg.Role, netOS: cfg.netOS, clock: cfg.clock, thread: thread, log: log}
	if cfg.Backend != nil {
		s.inv.fixed = cfg.Backend.Name()
	}
	s.leases = &leases{def: cfg.LeaseTTL, min: cfg.MinLeaseTTL, max: cfg.MaxLeaseTTL, log: log, expired: s.expired}
	s.gate = newTuneGate()
	owner := topology.AgentOwner(cfg.Name, cfg.Iface)
	s.pre = &preflight{
		host: live.Host(root, cfg.Root, cfg.Iface), iface: cfg.Iface, role: cfg.Role, allow: cfg.AllowFixes, known: cfg.KnownChecks, mgmt: cfg.listenAddrs, log: log,
		journal: topology.JournalOptions{StateDir: cfg.StateDir, Iface: cfg.Iface, RootName: cfg.Root, Owner: owner},
	}
	s.tuner = &tuner{root: root, iface: cfg.Iface, stateDir: cfg.StateDir, rootName: cfg.Root, owner: owner, pre: s.pre, log: log}
	s.conf = &configurer{
		iface: cfg.Iface, inv: s.inv, tuner: s.tuner, backend: cfg.Backend, threadInit: cfg.ThreadInit, log: log,
		gossip: cfg.Bind != "", allowDst: cfg.AllowDst,
		frames:  frameRails{srcMACs: cfg.AllowSrcMACs, vlans: cfg.AllowVLANs},
		targets: newTargetBook(members, targetDescriber(cfg), log),
	}
	s.mgmt = &mgmtRail{iface: cfg.Iface, allow: cfg.AllowMgmtIface, netOS: cfg.netOS, thread: thread}
	irqs := &irqVerifier{root: root, stateDir: cfg.StateDir, log: log}
	s.rx = &receiving{base: ctx, iface: cfg.Iface, thread: thread, log: log, changes: s.changes, irqs: irqs}
	s.tx = &sending{base: ctx, netOS: cfg.netOS, thread: thread, log: log, changes: s.changes, irqs: irqs}
	s.watcher = &watcher{changes: s.changes, base: ctx}
	if cfg.Role.Sends() {
		s.watcher.sender = s.tx.state
	}
	if cfg.Role.Receives() {
		s.watcher.receiver = s.rx.state
	}
	s.metrics = newMetrics(s)
	s.rx.metrics, s.tx.metrics = s.metrics, s.metrics
	return s
}

func (s *service) sends() bool    { return s.cfg.Role.Sends() }
func (s *service) receives() bool { return s.cfg.Role.Receives() }

// describe is what Describe tells: the inventory, the lease's holder and
// the host's checks for the run o describes.
func (s *service) describe(ctx context.Context, o doctor.Options) description {
	d := s.inv.describe(s.cfg.Version)
	d.lease, d.leased = s.leases.holder()
	if s.receives() {
		d.receiverMemory = s.cfg.ReceiverMemory
	}
	d.checks, d.checksErr = s.pre.check(ctx, o)
	d.allowFixes = s.cfg.AllowFixes
	return d
}

// hold runs fn while lease id of the caller of ctx is current (see
// leases.hold), and notes the lease's outcome for the call's audit line.
func (s *service) hold(ctx context.Context, id string, fn func(gen uint64) error) error {
	accepted := false
	err := s.leases.hold(callerOf(ctx), id, func(gen uint64) error {
		accepted = true
		noteLease(ctx, nil)
		return fn(gen)
	})
	if !accepted {
		noteLease(ctx, err)
	}
	return err
}

// acquire grants the caller of ctx the lease for coordinator.
func (s *service) acquire(ctx context.Context, coordinator string, ttl *time.Duration) (grant, error) {
	g, err := s.leases.acquire(ctx, callerOf(ctx), coordinator, ttl)
	noteLease(ctx, err)
	return g, err
}

// renew extends lease id of the caller of ctx.
func (s *service) renew(ctx context.Context, id string, ttl *time.Duration) (grant, error) {
	g, err := s.leases.renew(callerOf(ctx), id, ttl)
	noteLease(ctx, err)
	return g, err
}

// release ends lease id of the caller of ctx: stops a send, disarms the
// receiver and, unless keepTuning, restores the tuning. A lease already
// gone is no error; another identity's lease is refused.
func (s *service) release(ctx context.Context, id string, keepTuning bool) (restored, error) {
	c, done, err := s.leases.release(callerOf(ctx), id)
	noteLease(ctx, err)
	if err != nil || c == nil {
		return restored{}, err
	}
	defer done()
	s.log.Info("lease released", "holder", caller{name: c.holder}.display(), "coordinator", c.coordinator, "generation", c.gen, "keep_tuning", keepTuning)
	ctx, cancel := context.WithTimeout(ctx, s.leases.cleanupBound())
	defer cancel()
	r, err := s.endRun(ctx, c.gen, !keepTuning)
	if err != nil {
		return restored{}, failf(ErrFailed, "release: %w", err)
	}
	return r, nil
}

// expired cleans up after lease c that expired (ctx bounds the cleanup).
func (s *service) expired(ctx context.Context, c *lease) {
	s.log.Warn("lease expired: stopping, disarming and restoring the host", "holder", caller{name: c.holder}.display(), "coordinator", c.coordinator, "generation", c.gen)
	if _, err := s.endRun(ctx, c.gen, true); err != nil {
		s.log.Error("cleaning up after an expired lease", "generation", c.gen, "error", err)
	}
}

// tune pins the queue IRQs for the holder of lease id.
func (s *service) tune(ctx context.Context, id string, o tuneOptions) (t *tuning, err error) {
	// Under hold: the lease cannot end (and restore) while IRQs are pinned.
	err = s.hold(ctx, id, func(gen uint64) error {
		if err := s.mgmt.checkRequest(ctx, "tune", useTune); err != nil {
			return err
		}
		return s.gate.tune(ctx, gen, func() (err error) { t, err = s.tuner.tune(ctx, o); return err })
	})
	return t, err
}

// restore puts back the tuning for the holder of lease id.
func (s *service) restore(ctx context.Context, id string) (r restored, err error) {
	err = s.hold(ctx, id, func(gen uint64) error {
		r, err = s.restoreFor(ctx, gen)
		return err
	})
	return r, err
}

// restoreFor restores the tuning on behalf of lease generation gen,
// unless a later lease tuned the host meanwhile.
func (s *service) restoreFor(ctx context.Context, gen uint64) (r restored, err error) {
	skipped, err := s.gate.restore(ctx, gen, func() (err error) { r, err = s.tuner.restore(ctx); return err })
	if skipped {
		s.log.Warn("not restoring: a later lease tuned the host since", "generation", gen)
	}
	return r, err
}

// arm arms the receiver for the holder of lease id. The receiver's start
// (an XDP program load can take seconds) runs outside hold, so that the
// end of a lease — and every call held up behind it — never waits for it;
// an arm whose lease ended meanwhile is undone.
func (s *service) arm(ctx context.Context, id string, o receiver.Options) (armedInfo, error) {
	err := s.hold(ctx, id, func(uint64) error {
		if !s.receives() {
			return failf(ErrRole, "arm: the agent's role is %s, not a receiver", s.cfg.Role)
		}
		if err := checkIface("iface", o.Iface, s.cfg.Iface); err != nil {
			return err
		}
		if err := withinBudget(o, s.cfg.ReceiverMemory, s.inv.cpuCount()); err != nil {
			return err
		}
		if err := s.conf.frames.checkReflectVLAN(o.ReflectVLAN); err != nil {
			return err
		}
		return s.mgmt.checkRequest(ctx, "arm", useArm)
	})
	if err != nil {
		return armedInfo{}, err
	}
	info, err := s.rx.arm(o)
	if err != nil {
		return armedInfo{}, err
	}
	if err := s.leases.check(callerOf(ctx), id); err != nil {
		if derr := s.rx.disarmIf(info.armed); derr != nil {
			s.log.Warn("undo an arm whose lease ended during it", "error", derr)
		}
		return armedInfo{}, err
	}
	return info, nil
}

// collect reads the receiver for the holder of lease id; the reading (the
// final scans of the sequence bitmaps) runs outside hold, as arm's start.
func (s *service) collect(ctx context.Context, id string, keepArmed bool) (*receiver.Report, *irqCheck, error) {
	if err := s.hold(ctx, id, func(uint64) error { return nil }); err != nil {
		return nil, nil, err
	}
	return s.rx.collect(keepArmed)
}

// mayConfigure refuses a Configure that cannot succeed whatever its
// configuration: the lease, the role, a send under way.
func (s *service) mayConfigure(ctx context.Context, id string) error {
	return s.hold(ctx, id, func(uint64) error {
		if !s.sends() {
			return failf(ErrRole, "configure: the agent's role is %s, not a sender", s.cfg.Role)
		}
		return s.tx.idle()
	})
}

// configure makes cfg (sent by the backend named, "" for the best) the
// next send of the holder of lease id, once the safety rails allow it.
func (s *service) configure(ctx context.Context, id string, cfg pktgen.Config, backend pktgen.BackendName, rtt *rttPlan) (*configured, error) {
	if err := s.mayConfigure(ctx, id); err != nil {
		return nil, err
	}
	if err := s.mgmt.checkRequest(ctx, "configure", useSend); err != nil {
		return nil, err
	}
	c, err := s.conf.prepare(ctx, cfg, backend)
	if err != nil {
		return nil, err
	}
	if err := s.conf.checkDestinations(ctx, &c.cfg); err != nil {
		return nil, err
	}
	var probe *rttProbe
	if rtt != nil {
		if probe, err = s.conf.rttProbe(c.cfg, *rtt); err != nil {
			return nil, err
		}
		probe.thread, probe.log = s.tx.thread, s.log.Named("rtt")
	}
	if err := s.hold(ctx, id, func(uint64) error { return s.tx.configure(c.cfg, c.backend, probe) }); err != nil {
		return nil, err
	}
	s.log.Info("sender configured", "backend", c.backend.Name(), "device", c.cfg.Device, "cpus", c.cfg.CPUs, "dst", c.cfg.DstMin)
	return c, nil
}

// start starts the configured send of the holder of lease id at the
// instant at; it returns once the send started.
func (s *service) start(ctx context.Context, id string, at time.Time) (time.Time, error) {
	if err := checkStartAt(at); err != nil {
		return time.Time{}, err
	}
	if err := s.mgmt.checkRequest(ctx, "start", useSend); err != nil {
		return time.Time{}, err
	}
	var r *sendRun
	if err := s.hold(ctx, id, func(uint64) (err error) { r, err = s.tx.schedule(); return err }); err != nil {
		return time.Time{}, err
	}
	return s.tx.start(ctx, r, at)
}

// startedRun is the send the holder of lease id started (nil: none).
func (s *service) startedRun(ctx context.Context, id string) (r *sendRun, err error) {
	err = s.hold(ctx, id, func(uint64) error { r = s.tx.started(); return nil })
	return r, err
}

// stop stops the send of the holder of lease id.
func (s *service) stop(ctx context.Context, id string) (bool, time.Time, error) {
	r, err := s.startedRun(ctx, id)
	if err != nil {
		return false, time.Time{}, err
	}
	return s.tx.stop(ctx, r)
}

// result is the outcome of the send of the holder of lease id.
func (s *service) result(ctx context.Context, id string, wait bool) (*sendResult, error) {
	r, err := s.startedRun(ctx, id)
	if err != nil {
		return nil, err
	}
	return s.tx.result(ctx, r, wait)
}

// endRun stops a send, disarms the receiver and, with restore, restores
// the journal: what the end of lease generation gen does. A cleanup that
// overran its bound (a later lease holds the agent by now) leaves the
// later lease's run alone, and its tuning (restoreFor).
func (s *service) endRun(ctx context.Context, gen uint64, restore bool) (restored, error) {
	if later := s.leases.latest(); later > gen {
		s.log.Warn("late cleanup: a later lease holds the agent, leaving its run alone", "generation", gen, "later", later)
		if !restore {
			return restored{}, nil
		}
		return s.restoreFor(ctx, gen)
	}
	var errs []error
	if err := s.tx.end(ctx); err != nil {
		errs = append(errs, err)
	}
	if err := s.rx.disarm(); err != nil {
		errs = append(errs, err)
	}
	s.changes.notify()
	if !restore {
		return restored{}, errors.Join(errs...)
	}
	// Restored whatever the wait for the send took of ctx: the journal's
	// writes are quick, and a host left tuned is worse than a late answer.
	r, err := s.restoreFor(context.WithoutCancel(ctx), gen)
	if err != nil {
		errs = append(errs, err)
	}
	return r, errors.Join(errs...)
}

// close is the agent's shutdown: end any run, restore, stop watchers.
func (s *service) close(ctx context.Context) error {
	// Cancelled first: what runs under a lease (a send, an Arm) ends
	// rather than holding up the wait in leases.close.
	s.cancel()
	s.leases.close()
	_, err := s.endRun(ctx, math.MaxUint64, true)
	return err
}

// bounds are the limits every request is checked against (bounds.go).
func (s *service) bounds() requestBounds {
	return requestBounds{cpus: s.inv.hostCPUs, maxRun: s.cfg.MaxRunLength}
}
