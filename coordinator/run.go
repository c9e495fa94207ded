package coordinator

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	lineratev1 "github.com/linerate/linerate/proto/linerate/v1"
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

// node is one agent taking part in the run.
type node struct {
	m        Member
	role     string // sender or receiver in this run
	conn     *grpc.ClientConn
	c        lineratev1.AgentClient
	desc     *lineratev1.DescribeResponse
	lease    string
	tune     *lineratev1.TuneResponse
	host     *Host
	dst      netip.Addr // receivers: the data address flows are sent to
	mac      string
	flowOf   []int // sender: the flow (index into pairs) of each thread
	summary  *lineratev1.SenderSummary
	report   *lineratev1.ReceiverReport
	started  time.Time
	stopOnce sync.Once
}

// runState is one run in progress.
type runState struct {
	r      *Runner
	spec   Spec
	log    hclog.Logger
	res    *Result
	nodes  map[string]*node
	order  []*node // senders then receivers, as named
	pairs  []Pair
	phase  atomic.Value
	cancel context.CancelCauseFunc
	mu     sync.Mutex
}

// failure is why a run ended early: which agent, in which phase.
type failure struct {
	agent, phase string
	err          error
}

func (f *failure) Error() string {
	if f.agent == "" {
		return fmt.Sprintf("%s: %v", f.phase, f.err)
	}
	return fmt.Sprintf("agent %s, phase %s: %v", f.agent, f.phase, f.err)
}
func (f *failure) Unwrap() error { return f.err }

func newRunID() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return time.Now().UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b[:])
}

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
	pairs, _ := Pairs(spec.Pattern, spec.Senders, spec.Receivers) // Validate checked them
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
		res: &Result{RunID: newRunID(), Pattern: spec.Pattern, FrameSize: spec.FrameSize, IMIX: spec.IMIX, RatePPS: spec.Rate, Started: time.Now().UTC()},
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

func (st *runState) setPhase(p string) {
	st.phase.Store(p)
	st.log.Info("phase", "phase", p)
	if st.r.OnPhase != nil {
		st.r.OnPhase(PhaseEvent{Event: "phase", Time: time.Now().UTC(), Phase: p})
	}
}

func (st *runState) currentPhase() string { return st.phase.Load().(string) }

// fail ends the run with agent's error in the current phase.
func (st *runState) fail(agent string, err error) {
	st.cancel(&failure{agent: agent, phase: st.currentPhase(), err: err})
}

func (st *runState) finish(err error) {
	res := st.res
	res.Finished = time.Now().UTC()
	var f *failure
	switch {
	case err == nil && len(res.Flows) == len(st.pairs):
		res.Status = StatusOK
	case err == nil:
		res.Status = StatusPartial
	case errors.As(err, &f):
		res.Status, res.Error, res.FailedPhase = StatusFailed, f.Error(), f.phase
		if len(res.Flows) > 0 {
			res.Status = StatusPartial
		}
	case errors.Is(err, context.Canceled):
		res.Status, res.Error, res.FailedPhase = StatusFailed, "interrupted during phase "+st.currentPhase(), st.currentPhase()
	default:
		res.Status, res.Error, res.FailedPhase = StatusFailed, err.Error(), st.currentPhase()
	}
	for _, n := range st.order {
		h := *n.host
		if h.IRQMap == nil {
			h.IRQMap = []IRQPin{}
		}
		if h.SkippedIRQs == nil {
			h.SkippedIRQs = []SkippedIRQ{}
		}
		res.Hosts = append(res.Hosts, h)
	}
	if res.Flows == nil {
		res.Flows = []Flow{}
	}
	if res.Hosts == nil {
		res.Hosts = []Host{}
	}
}

// each runs fn on every node concurrently and returns the first failure
// (as a *failure naming the node).
func (st *runState) each(ctx context.Context, nodes []*node, fn func(ctx context.Context, n *node) error) error {
	return inParallel(ctx, len(nodes), func(i int) error {
		if err := fn(ctx, nodes[i]); err != nil {
			return &failure{agent: nodes[i].m.Name, phase: st.currentPhase(), err: err}
		}
		return nil
	})
}

// inParallel runs fn(0..n-1) concurrently and returns the first error in
// index order — or, when ctx was cancelled meanwhile (another agent
// failed, or Ctrl-C), its cause: the calls in flight failed with it.
func inParallel(ctx context.Context, n int, fn func(i int) error) error {
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = fn(i)
		}()
	}
	wg.Wait()
	if cause := context.Cause(ctx); cause != nil {
		return cause
	}
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func (st *runState) call(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, st.r.CallTimeout)
}

// withRole are the run's nodes of one role ("sender" or "receiver"), in
// run order.
func (st *runState) withRole(role string) []*node {
	var out []*node
	for _, n := range st.order {
		if n.role == role {
			out = append(out, n)
		}
	}
	return out
}

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
	// A member that fails or leaves fails the run at once.
	events, unsubscribe := st.r.Cluster.Subscribe()
	defer unsubscribe()
	bg.Go(func() {
		for {
			select {
			case e := <-events:
				if n := st.nodes[e.Member.Name]; n != nil && (e.Type == "member-failed" || e.Type == "member-leave") {
					what := map[string]string{"member-failed": "failed (no longer answers gossip)", "member-leave": "left the cluster"}[e.Type]
					st.fail(n.m.Name, errors.New(what))
				}
			case <-ctx.Done():
				return
			}
		}
	})

	st.setPhase(PhaseDescribe)
	if err := st.each(ctx, st.order, st.describe); err != nil {
		return err
	}
	st.setPhase(PhaseLease)
	if err := st.each(ctx, st.order, st.acquire); err != nil {
		return err
	}
	bg.Go(func() { st.renew(ctx) })
	st.setPhase(PhaseTune)
	if err := st.each(ctx, st.order, st.tuneNode); err != nil {
		return err
	}
	st.setPhase(PhaseArm)
	if err := st.each(ctx, st.withRole("receiver"), st.arm); err != nil {
		return err
	}
	st.setPhase(PhaseConfigure)
	if err := st.each(ctx, st.withRole("sender"), st.configure); err != nil {
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
	if err := st.each(ctx, st.withRole("receiver"), st.collect); err != nil {
		return err
	}
	stopWatch()
	st.setPhase(PhaseReconcile)
	st.reconcile()
	return nil
}

// discover finds every named agent alive in the cluster with a role that
// fits, and dials it.
func (st *runState) discover() error {
	st.setPhase(PhaseDiscover)
	members := map[string]Member{}
	var names []string
	for _, m := range st.r.Cluster.Members() {
		members[m.Name] = m
		if m.Status == "alive" {
			names = append(names, m.Name+"("+m.Role+")")
		}
	}
	add := func(name, role string) error {
		m, ok := members[name]
		switch {
		case !ok:
			return &failure{agent: name, phase: PhaseDiscover, err: fmt.Errorf("not a member of the cluster (alive: %s)", listOrNone(names))}
		case m.Status != "alive":
			return &failure{agent: name, phase: PhaseDiscover, err: fmt.Errorf("member is %s, not alive", m.Status)}
		case role == "sender" && !m.Sends(), role == "receiver" && !m.Receives():
			return &failure{agent: name, phase: PhaseDiscover, err: fmt.Errorf("runs as %s, cannot be a %s", m.Role, role)}
		}
		n := &node{m: m, role: role, host: &Host{Name: name, Role: role, Iface: m.Iface, NUMANode: m.NUMA}}
		st.nodes[name], st.order = n, append(st.order, n)
		return nil
	}
	for _, s := range st.spec.Senders {
		if err := add(s, "sender"); err != nil {
			return err
		}
	}
	for _, rc := range st.spec.Receivers {
		if err := add(rc, "receiver"); err != nil {
			return err
		}
	}
	for _, n := range st.order {
		conn, err := st.r.Dial(n.m)
		if err != nil {
			return &failure{agent: n.m.Name, phase: PhaseDiscover, err: err}
		}
		n.conn, n.c = conn, lineratev1.NewAgentClient(conn)
	}
	return nil
}

func listOrNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

func (st *runState) describe(ctx context.Context, n *node) error {
	cctx, cancel := st.call(ctx)
	defer cancel()
	d, err := n.c.Describe(cctx, &lineratev1.DescribeRequest{})
	if err != nil {
		return fmt.Errorf("describe: %w", err)
	}
	n.desc = d
	h := n.host
	h.Kernel = d.Kernel
	if nic := d.Nic; nic != nil {
		h.Iface, h.Driver, h.NUMANode, h.LinkSpeedMbps = nic.Iface, nic.Driver, int(nic.NumaNode), nic.LinkSpeedMbps
		h.Firmware, h.Model, h.PCI = nic.Firmware, nic.Model, nic.Pci
		n.mac = nic.Mac
		for _, s := range nic.Skipped {
			h.SkippedIRQs = append(h.SkippedIRQs, SkippedIRQ{IRQ: int(s.Irq), Name: s.Name, Reason: s.Reason})
		}
	}
	if n.role == "receiver" {
		if d.Nic == nil || n.mac == "" {
			return fmt.Errorf("describe: no MAC for its data interface %s", n.m.Iface)
		}
		for _, ip := range d.Nic.DataIps {
			a, err := netip.ParseAddr(ip)
			if err == nil && (!n.dst.IsValid() || a.Is4() && !n.dst.Is4()) {
				n.dst = a // an IPv4 address when there is one
			}
		}
		if !n.dst.IsValid() {
			return fmt.Errorf("describe: its data interface %s has no address to send to", h.Iface)
		}
	}
	return nil
}

func (st *runState) acquire(ctx context.Context, n *node) error {
	cctx, cancel := st.call(ctx)
	defer cancel()
	resp, err := n.c.AcquireLease(cctx, &lineratev1.AcquireLeaseRequest{CoordinatorId: st.r.ID + "/" + st.res.RunID, Ttl: durationpb.New(st.spec.LeaseTTL)})
	if err != nil {
		return fmt.Errorf("acquire lease: %w", err)
	}
	st.mu.Lock()
	n.lease = resp.LeaseId
	st.mu.Unlock()
	return nil
}

// renew keeps every lease alive at a third of its TTL; a refused renewal
// fails the run (the agent has restored itself by then).
func (st *runState) renew(ctx context.Context) {
	t := time.NewTicker(st.spec.LeaseTTL / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		for _, n := range st.order {
			cctx, cancel := context.WithTimeout(ctx, st.spec.LeaseTTL/3)
			_, err := n.c.RenewLease(cctx, &lineratev1.RenewLeaseRequest{LeaseId: n.lease, Ttl: durationpb.New(st.spec.LeaseTTL)})
			cancel()
			if err != nil && ctx.Err() == nil {
				st.fail(n.m.Name, fmt.Errorf("renew lease: %w", err))
				return
			}
		}
	}
}

func hasQueueIRQs(d *lineratev1.DescribeResponse) bool {
	if d.Nic == nil {
		return false
	}
	for _, q := range d.Nic.Queues {
		if q.Irq > 0 {
			return true
		}
	}
	return false
}

func (st *runState) tuneNode(ctx context.Context, n *node) error {
	switch {
	case st.spec.NoTune:
		n.host.Tuned = "not tuned: --no-tune"
		return nil
	case !hasQueueIRQs(n.desc):
		n.host.Tuned = "not tuned: no queue IRQs (virtual device)"
		return nil
	}
	threads := 0
	if n.role == "sender" {
		threads = st.spec.Threads
	}
	cctx, cancel := st.call(ctx)
	defer cancel()
	t, err := n.c.Tune(cctx, &lineratev1.TuneRequest{LeaseId: n.lease, Threads: int32(threads), Irqbalance: st.spec.IRQBalance})
	if err != nil {
		return fmt.Errorf("tune: %w", err)
	}
	n.tune = t
	h := n.host
	h.Tuned = "applied"
	h.NUMANode = int(t.NumaNode)
	for _, m := range t.IrqMap {
		h.IRQMap = append(h.IRQMap, IRQPin{Queue: int(m.Queue), IRQ: int(m.Irq), CPU: int(m.Cpu), Name: m.Name, Dir: m.Dir})
	}
	for _, m := range t.Managed {
		h.ManagedIRQs = append(h.ManagedIRQs, IRQPin{Queue: int(m.Queue), IRQ: int(m.Irq), CPU: int(m.Cpu), Name: m.Name, Dir: m.Dir})
	}
	h.SkippedIRQs = nil
	for _, s := range t.Skipped {
		h.SkippedIRQs = append(h.SkippedIRQs, SkippedIRQ{IRQ: int(s.Irq), Name: s.Name, Reason: s.Reason})
	}
	h.Warnings = append(h.Warnings, t.Warnings...)
	return nil
}

func (st *runState) arm(ctx context.Context, n *node) error {
	cctx, cancel := st.call(ctx)
	defer cancel()
	resp, err := n.c.Arm(cctx, &lineratev1.ArmRequest{LeaseId: n.lease, Method: st.spec.Method})
	if err != nil {
		return fmt.Errorf("arm: %w", err)
	}
	n.host.Method, n.host.MethodReason = resp.Method, resp.MethodReason
	return nil
}

// flowsOf are the indexes of st.pairs that n sends.
func (st *runState) flowsOf(n *node) []int {
	var out []int
	for i, p := range st.pairs {
		if p.Sender == n.m.Name {
			out = append(out, i)
		}
	}
	return out
}

// slot is where a sender thread can run: a CPU and, when tuned, the
// queue whose IRQ is pinned to it (-1: none).
type slot struct{ cpu, queue int32 }

// senderThreads plans a sender's threads: perFlow threads for each of
// its flows, spread over the slots in turn, each flow's count split over
// its threads. flowOf[i] is thread i's flow.
func senderThreads(flows []int, perFlow int, slots []slot, count uint64) (cpus, queues []int32, flowOf []int, counts []uint64) {
	queued := len(slots) > 0 && slots[0].queue >= 0
	for fi, f := range flows {
		for k := range perFlow {
			sl := slots[(fi*perFlow+k)%len(slots)]
			cpus, flowOf = append(cpus, sl.cpu), append(flowOf, f)
			if queued {
				queues = append(queues, sl.queue)
			}
			if count > 0 {
				c := count / uint64(perFlow)
				if uint64(k) < count%uint64(perFlow) {
					c++
				}
				counts = append(counts, c)
			}
		}
	}
	return cpus, queues, flowOf, counts
}

// slots are the places n's threads may run: the tuned queues' CPUs, or
// the NIC's local CPUs when nothing was pinned.
func (n *node) slots() []slot {
	var out []slot
	if n.tune != nil {
		seen := map[int32]bool{}
		for _, m := range n.tune.IrqMap {
			if !seen[m.Queue] {
				seen[m.Queue] = true
				out = append(out, slot{cpu: m.Cpu, queue: m.Queue})
			}
		}
	}
	if len(out) == 0 && n.desc.Nic != nil {
		for _, c := range n.desc.Nic.LocalCpus {
			out = append(out, slot{cpu: c, queue: -1})
		}
	}
	if len(out) == 0 {
		out = []slot{{cpu: 0, queue: -1}}
	}
	return out
}

// portOf is the UDP destination port of a sender's streams: with the
// destination and the per-thread source it names each stream uniquely.
func (st *runState) portOf(sender string) uint32 {
	return uint32(st.spec.BasePort + slices.Index(st.spec.Senders, sender))
}

func (st *runState) configure(ctx context.Context, n *node) error {
	flows := st.flowsOf(n)
	slots := n.slots()
	perFlow := st.spec.Threads
	if perFlow == 0 {
		perFlow = 1
		if len(flows) == 1 && n.tune != nil && len(n.tune.IrqMap) > 0 {
			perFlow = len(slots) // one thread per tuned queue
		}
	}
	cpus, queues, flowOf, counts := senderThreads(flows, perFlow, slots, st.spec.Count)
	n.flowOf = flowOf
	first := st.nodes[st.pairs[flows[0]].Receiver]
	port := st.portOf(n.m.Name)
	var imix []*lineratev1.ImixEntry
	pkt := int32(st.spec.FrameSize - FCSBytes)
	for _, e := range st.spec.IMIX {
		imix, pkt = append(imix, &lineratev1.ImixEntry{Size: int32(e.Size - FCSBytes), Weight: int32(e.Weight)}), 0
	}
	cfg := &lineratev1.SenderConfig{
		Imix:         imix,
		Cpus:         cpus,
		Queues:       queues,
		Counts:       counts,
		PktSize:      pkt,
		RatePps:      st.spec.Rate / uint64(perFlow),
		DstMin:       first.dst.String(),
		DstMac:       first.mac,
		SrcPerThread: true,
		UdpDstMin:    port,
		UdpDstMax:    port,
		Backend:      st.spec.Backend,
	}
	if st.spec.Rate%uint64(perFlow) != 0 {
		n.host.Warnings = append(n.host.Warnings, fmt.Sprintf("rate %d pps per flow over %d threads: %d pps each", st.spec.Rate, perFlow, cfg.RatePps))
	}
	if st.spec.Duration > 0 {
		cfg.Duration = durationpb.New(st.spec.Duration)
	}
	if len(flows) > 1 {
		for _, f := range flowOf {
			r := st.nodes[st.pairs[f].Receiver]
			cfg.ThreadDst = append(cfg.ThreadDst, &lineratev1.ThreadDest{Ip: r.dst.String(), Mac: r.mac})
		}
	}
	cctx, cancel := st.call(ctx)
	defer cancel()
	resp, err := n.c.Configure(cctx, &lineratev1.ConfigureRequest{LeaseId: n.lease, Config: cfg})
	if err != nil {
		return fmt.Errorf("configure: %w", err)
	}
	n.host.Backend = resp.Backend
	for _, c := range cpus {
		n.host.CPUs = append(n.host.CPUs, int(c))
	}
	n.host.Warnings = append(n.host.Warnings, resp.Warnings...)
	return nil
}

// start sets one instant for every sender, far enough ahead that each
// Start call arrives before it, and measures the skew of the reported
// start times.
func (st *runState) start(ctx context.Context) error {
	var starters []starter
	for _, n := range st.withRole("sender") {
		starters = append(starters, starter{Name: n.m.Name, Client: n.c, Lease: n.lease})
	}
	rep, err := startAt(ctx, starters, st.spec.StartLead, st.r.CallTimeout)
	if err != nil {
		return err
	}
	for _, n := range st.withRole("sender") {
		n.started = rep.Started[n.m.Name]
		t := n.started.UTC()
		n.host.StartedAt = &t
	}
	st.res.StartSkewUS, st.res.StartOffsetP50US, st.res.StartOffsetP99US = rep.SpreadUS, rep.P50US, rep.P99US
	st.log.Debug("senders started", "spread_us", rep.SpreadUS, "p50_us", rep.P50US, "p99_us", rep.P99US)
	return nil
}

// starter is a configured sender to start.
type starter struct {
	Name   string
	Client lineratev1.AgentClient
	Lease  string
}

// startReport tells when each sender began against the common instant.
type startReport struct {
	At      time.Time
	Lead    time.Duration
	Started map[string]time.Time
	// SpreadUS is the start skew: last start minus first, µs. P50US and
	// P99US are percentiles of each start's lateness after At.
	SpreadUS, P50US, P99US float64
}

// startAt starts every sender at one instant, lead ahead (0: ten times
// the slowest round trip, at least 200 ms), and reports the skew. The
// first failure is returned as a *failure naming the sender.
func startAt(ctx context.Context, senders []starter, lead, callTimeout time.Duration) (*startReport, error) {
	if callTimeout == 0 {
		callTimeout = 30 * time.Second
	}
	if lead == 0 {
		var worst time.Duration
		for _, s := range senders {
			t0 := time.Now()
			cctx, cancel := context.WithTimeout(ctx, callTimeout)
			_, err := s.Client.Describe(cctx, &lineratev1.DescribeRequest{})
			cancel()
			if err != nil {
				return nil, &failure{agent: s.Name, phase: PhaseStart, err: fmt.Errorf("describe (timing the start): %w", err)}
			}
			worst = max(worst, time.Since(t0))
		}
		lead = max(200*time.Millisecond, 10*worst)
	}
	rep := &startReport{At: time.Now().Add(lead), Lead: lead, Started: map[string]time.Time{}}
	var mu sync.Mutex
	err := inParallel(ctx, len(senders), func(i int) error {
		s := senders[i]
		cctx, cancel := context.WithTimeout(ctx, lead+callTimeout)
		defer cancel()
		resp, err := s.Client.Start(cctx, &lineratev1.StartRequest{LeaseId: s.Lease, At: timestamppb.New(rep.At)})
		if err != nil {
			return &failure{agent: s.Name, phase: PhaseStart, err: fmt.Errorf("start: %w", err)}
		}
		mu.Lock()
		rep.Started[s.Name] = resp.StartedAt.AsTime()
		mu.Unlock()
		return nil
	})
	if err != nil {
		return nil, err
	}
	var late []float64
	var first, last time.Time
	for _, t := range rep.Started {
		if first.IsZero() || t.Before(first) {
			first = t
		}
		if last.IsZero() || t.After(last) {
			last = t
		}
		late = append(late, float64(t.Sub(rep.At).Nanoseconds())/1e3)
	}
	rep.SpreadUS = float64(last.Sub(first).Nanoseconds()) / 1e3
	rep.P50US, rep.P99US = percentile(late, 50), percentile(late, 99)
	return rep, nil
}

// percentile is the nearest-rank p-th percentile of v (0 for none).
func percentile(v []float64, p float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	rank := int(math.Ceil(p / 100 * float64(len(s))))
	return s[min(max(rank, 1), len(s))-1]
}

// wait collects every sender's result: at the end of its count or
// duration, or after Stop when the run is cut short.
func (st *runState) wait(ctx context.Context) error {
	senders := st.withRole("sender")
	var deadline <-chan time.Time
	if st.spec.Duration > 0 {
		// A sender that outlives its duration by far is stopped.
		t := time.NewTimer(st.spec.Duration + 30*time.Second)
		defer t.Stop()
		deadline = t.C
	}
	done := make(chan struct{})
	go func() {
		select {
		case <-deadline:
			st.log.Warn("senders still running past their duration: stopping them")
			st.stopSenders(ctx)
		case <-done:
		case <-ctx.Done():
		}
	}()
	defer close(done)
	return st.each(ctx, senders, func(ctx context.Context, n *node) error {
		resp, err := n.c.Result(ctx, &lineratev1.ResultRequest{LeaseId: n.lease, Wait: true})
		if err != nil {
			return fmt.Errorf("result: %w", err)
		}
		n.summary = resp.Summary
		if s := resp.Summary; s != nil {
			n.host.Sent, n.host.SendErrors, n.host.TxDropped = s.Packets, s.Errors, s.TxDropped
			n.host.Warnings = append(n.host.Warnings, s.Warnings...)
			if s.Backend != "" {
				n.host.Backend = s.Backend
			}
		}
		return nil
	})
}

func (st *runState) stopSenders(ctx context.Context) {
	for _, n := range st.withRole("sender") {
		st.mu.Lock()
		leased := n.lease != ""
		st.mu.Unlock()
		if !leased {
			continue
		}
		n.stopOnce.Do(func() {
			cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			if _, err := n.c.Stop(cctx, &lineratev1.StopRequest{LeaseId: n.lease}); err != nil {
				st.log.Warn("stop sender", "agent", n.m.Name, "error", err)
			}
		})
	}
}

func (st *runState) collect(ctx context.Context, n *node) error {
	cctx, cancel := st.call(ctx)
	defer cancel()
	resp, err := n.c.Collect(cctx, &lineratev1.CollectRequest{LeaseId: n.lease})
	if err != nil {
		return fmt.Errorf("collect: %w", err)
	}
	n.report = resp.Report
	if rp := resp.Report; rp != nil {
		n.host.Received = rp.Packets - min(rp.OtherPackets, rp.Packets) // test packets only
		n.host.OtherFrames = rp.OtherPackets
		n.host.HostDrops = receiverHostDrops(rp)
		if n.host.Method == "" {
			n.host.Method = rp.Method
		}
	}
	return nil
}

func receiverHostDrops(rp *lineratev1.ReceiverReport) uint64 {
	d := rp.RingDrops
	if l := rp.Link; l != nil {
		d += l.RxDropped + l.RxMissed + l.RxFifo
	}
	return d
}

// watch streams n's live counters to OnSample; a stream that breaks while
// the run is going fails the run: the agent is gone.
func (st *runState) watch(ctx context.Context, n *node) {
	stream, err := n.c.Watch(ctx, &lineratev1.WatchRequest{Interval: durationpb.New(st.spec.WatchInterval)})
	if err != nil {
		if ctx.Err() == nil {
			st.fail(n.m.Name, fmt.Errorf("watch: %w", err))
		}
		return
	}
	var last *Sample
	frame := st.spec.MeanFrame() + FCSBytes
	for {
		resp, err := stream.Recv()
		if err != nil {
			if ctx.Err() == nil {
				st.fail(n.m.Name, fmt.Errorf("connection lost (watch stream: %w)", err))
			}
			return
		}
		s := Sample{Event: "sample", Time: resp.Time.AsTime().UTC(), Agent: n.m.Name, Role: n.role}
		switch {
		case n.role == "sender" && resp.Sender != nil:
			s.Phase, s.Packets, s.Errors = phaseName(resp.Sender.Phase), resp.Sender.Packets, resp.Sender.Errors
			if resp.Sender.Phase == lineratev1.Phase_PHASE_FAILED && ctx.Err() == nil {
				st.fail(n.m.Name, fmt.Errorf("send failed: %s", resp.Sender.Error))
			}
		case n.role == "receiver" && resp.Receiver != nil:
			s.Phase, s.Packets, s.Errors = phaseName(resp.Receiver.Phase), resp.Receiver.Packets, resp.Receiver.Errors
		default:
			continue
		}
		if last != nil && s.Time.After(last.Time) && s.Packets >= last.Packets {
			dt := s.Time.Sub(last.Time).Seconds()
			s.PPS = float64(s.Packets-last.Packets) / dt
			s.L2BPS = s.PPS * frame * 8
		}
		last = &s
		if st.r.OnSample != nil {
			st.r.OnSample(s)
		}
	}
}

func phaseName(p lineratev1.Phase) string {
	return strings.ToLower(strings.TrimPrefix(p.String(), "PHASE_"))
}

// reconcile balances every flow from the senders' per-thread counts and
// the receivers' per-stream counts. A host's drops are shared out over
// its flows in order, never counted twice.
func (st *runState) reconcile() {
	txBudget := map[string]uint64{}
	rxBudget := map[string]uint64{}
	for _, n := range st.withRole("receiver") {
		rxBudget[n.m.Name] = n.host.HostDrops
	}
	for _, n := range st.withRole("sender") {
		txBudget[n.m.Name] = n.host.TxDropped
	}
	for i, p := range st.pairs {
		s, rcv := st.nodes[p.Sender], st.nodes[p.Receiver]
		if s.summary == nil || rcv.report == nil {
			st.res.Warnings = append(st.res.Warnings, fmt.Sprintf("flow %s → %s: no result (sender summary %t, receiver report %t)", p.Sender, p.Receiver, s.summary != nil, rcv.report != nil))
			continue
		}
		port := st.portOf(p.Sender)
		in := FlowInput{
			Sender: p.Sender, Receiver: p.Receiver,
			SenderHostDrops:   txBudget[p.Sender],
			ReceiverHostDrops: rxBudget[p.Receiver],
			DurationSec:       float64(s.summary.Usec) / 1e6,
			FrameBytes:        st.spec.MeanFrame(),
			LinkSpeedMbps:     float64(minPositive(s.host.LinkSpeedMbps, rcv.host.LinkSpeedMbps)),
			OfferedPPS:        float64(st.spec.Rate),
			AchievedPPS:       s.summary.Pps,
		}
		matched := map[string]bool{}
		var detail []StreamResult
		var threadPPS float64
		for j, t := range s.summary.Threads {
			if j < len(s.flowOf) && s.flowOf[j] != i {
				continue // another flow's thread
			}
			in.NotSent += t.Errors
			threadPPS += t.Pps
			sc := StreamCounts{Src: t.Src, Dst: rcv.dst.String(), DstPort: int(port), Sent: t.Packets}
			d := StreamResult{Src: t.Src, Dst: sc.Dst, DstPort: int(port), Sent: t.Packets}
			for _, rs := range rcv.report.Streams {
				if rs.DstPort == port && rs.Src == t.Src && rs.Dst == sc.Dst {
					sc.Received, sc.Duplicates, sc.Reordered = rs.Received, rs.Duplicates, rs.Reordered
					d.Received, d.Duplicates, d.Reordered, d.MaxSeq, d.Missing = rs.Received, rs.Duplicates, rs.Reordered, rs.MaxSeq, rs.Missing
					for _, m := range rs.MissingRanges {
						d.MissingRanges = append(d.MissingRanges, [2]uint32{m.From, m.To})
					}
					matched[rs.Src] = true
				}
			}
			d.Lost = sc.Lost()
			in.Streams = append(in.Streams, sc)
			detail = append(detail, d)
		}
		for _, rs := range rcv.report.Streams {
			if rs.DstPort == port && !matched[rs.Src] {
				st.res.Warnings = append(st.res.Warnings, fmt.Sprintf("flow %s → %s: %d packets of an unknown stream from %s to port %d (not sent in this run)", p.Sender, p.Receiver, rs.Received, rs.Src, port))
			}
		}
		if len(st.flowsOf(s)) > 1 {
			in.AchievedPPS = threadPPS // this flow's threads only
		}
		f := Reconcile(in)
		f.StreamDetail = detail
		txBudget[p.Sender] -= f.LostSenderHost
		rxBudget[p.Receiver] -= f.LostReceiverHost
		st.res.Flows = append(st.res.Flows, f)
	}
}

func minPositive(a, b int64) int64 {
	switch {
	case a <= 0:
		return max(b, 0)
	case b <= 0:
		return a
	}
	return min(a, b)
}

// cleanup stops, restores and releases every leased agent and closes
// every connection, whatever state the run ended in, with its own time
// budget (the run's context may be cancelled).
func (st *runState) cleanup() {
	prev := st.currentPhase()
	st.setPhase(PhaseRestore)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st.stopSenders(ctx)
	var wg sync.WaitGroup
	for _, n := range st.order {
		st.mu.Lock()
		lease := n.lease
		st.mu.Unlock()
		if lease == "" {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			cctx, cancel := context.WithTimeout(ctx, 15*time.Second)
			defer cancel()
			resp, err := n.c.ReleaseLease(cctx, &lineratev1.ReleaseLeaseRequest{LeaseId: lease, KeepTuning: st.spec.KeepTuning})
			switch {
			case err != nil:
				n.host.Warnings = append(n.host.Warnings, fmt.Sprintf("release lease: %v (the agent restores when the lease expires or it restarts)", err))
			case n.host.Tuned == "applied" && st.spec.KeepTuning:
				n.host.Tuned = "kept"
			case n.host.Tuned == "applied":
				n.host.Tuned = "restored"
			}
			if resp != nil {
				n.host.Warnings = append(n.host.Warnings, resp.Warnings...)
			}
		}()
	}
	wg.Wait()
	for _, n := range st.order {
		if n.conn != nil {
			_ = n.conn.Close()
		}
	}
	st.phase.Store(prev) // a failure names the phase it happened in
}
