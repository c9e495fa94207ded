package agent

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"runtime"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/serf/serf"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/linerate/linerate/pktgen"
	"github.com/linerate/linerate/pktgen/choose"
	"github.com/linerate/linerate/pktgen/xdp"
	lineratev1 "github.com/linerate/linerate/proto/linerate/v1"
	"github.com/linerate/linerate/receiver"
	"github.com/linerate/linerate/topology"
	"github.com/linerate/linerate/topology/cpuset"
)

// maxStartAhead is how far in the future Start's `at` may be.
const maxStartAhead = time.Minute

// minWatchInterval is the shortest Watch interval.
const minWatchInterval = 200 * time.Millisecond

// destinationSettle is how long Configure waits for gossip to bring the
// receiver a destination belongs to before it refuses the destination.
const destinationSettle = 3 * time.Second

type lease struct {
	id, coordinator string
	expires         time.Time
	ttl             time.Duration
	timer           *time.Timer
}

// sendRun is one sender run, from Configure to its summary.
type sendRun struct {
	cfg      pktgen.Config
	backend  pktgen.Backend
	phase    lineratev1.Phase
	cancel   context.CancelFunc
	done     chan struct{} // closed when the run ends
	started  time.Time
	stopped  time.Time
	progress pktgen.Progress
	summary  *pktgen.Summary
	err      error
	// what the metrics counted of this run so far
	countedPackets, countedErrors uint64
	// what the device's tx_dropped grew by over the run (txDroppedOK:
	// read at both ends)
	txDropped   uint64
	txDroppedOK bool
}

// armed is the receiver while it counts.
type armed struct {
	rx      *receiver.Receiver
	cancel  context.CancelFunc
	at      time.Time
	counted uint64 // test packets the metrics counted so far
}

// inventory is what Inspect found, for tags and Describe.
type inventory struct {
	nic    *topology.NIC
	report *topology.Report
	numa   int
	queues int
	speed  int64
	err    error
	online []int // without a NIC topology: the online CPUs, reported as local
}

// service implements lineratev1.AgentServer.
type service struct {
	lineratev1.UnimplementedAgentServer
	cfg  *Config
	root *topology.DirRoot
	log  hclog.Logger

	base   context.Context // cancelled at shutdown
	cancel context.CancelFunc
	// members are the serf members the agent sees (none without
	// gossip): the receivers a sender may send to.
	members func() []serf.Member
	metrics *metrics

	mu      sync.Mutex
	inv     inventory
	lease   *lease
	send    *sendRun
	recv    *armed
	tuned   []int // CPUs Tune pinned queues to, in queue order
	queues  []int // the queues of tuned
	pinned  int   // IRQs Tune pinned
	changed chan struct{}
	closed  bool
}

func newService(cfg *Config, root *topology.DirRoot, log hclog.Logger) *service {
	ctx, cancel := context.WithCancel(context.Background())
	s := &service{cfg: cfg, root: root, log: log, base: ctx, cancel: cancel, changed: make(chan struct{})}
	s.metrics = newMetrics(s)
	return s
}

// notify wakes the watchers (a phase changed). Callers hold s.mu.
func (s *service) notify() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// onThread runs fn on a fresh locked OS thread after cfg.ThreadInit (the
// thread is discarded afterwards), or directly without one.
func (s *service) onThread(fn func() error) error {
	if s.cfg.ThreadInit == nil {
		return fn()
	}
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the runtime discards the thread
		if err := s.cfg.ThreadInit(); err != nil {
			errc <- fmt.Errorf("thread init: %w", err)
			return
		}
		errc <- fn()
	}()
	return <-errc
}

// inspect reads the NIC once at start; an interface without a device
// (veth) has no queues, which is fine.
func (s *service) inspect() {
	inv := inventory{numa: -1}
	nic, err := topology.Inspect(s.root, s.cfg.Iface)
	if err != nil {
		inv.err = err
		s.log.Info("no NIC topology for the interface: reporting no queues", "iface", s.cfg.Iface, "why", err)
		if online, err := topology.OnlineCPUs(s.root); err == nil {
			inv.online = online.CPUs()
		}
	} else {
		inv.nic, inv.report = nic, topology.ShowReport(nic)
		inv.numa, inv.queues = nic.NUMANode, nic.Queues()
	}
	inv.speed = topology.LinkSpeedMbps(s.root, s.cfg.Iface)
	s.mu.Lock()
	s.inv = inv
	s.mu.Unlock()
}

func (s *service) inventory() inventory {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.inv
}

func (s *service) sends() bool    { return s.cfg.Role == RoleSender || s.cfg.Role == RoleBoth }
func (s *service) receives() bool { return s.cfg.Role == RoleReceiver || s.cfg.Role == RoleBoth }

func (s *service) kernelPktgen() bool {
	_, err := os.Stat(pktgen.DefaultProcDir)
	return err == nil
}

func (s *service) xdpBackend() *xdp.Backend {
	b := xdp.New(s.log)
	b.ThreadInit = s.cfg.ThreadInit
	return b
}

// backends are the sender backends this host can run now.
func (s *service) backends() []string {
	if !s.sends() {
		return nil
	}
	var out []string
	if s.kernelPktgen() {
		out = append(out, "kernel")
	}
	if s.xdpBackend().Probe(s.cfg.Iface) == nil {
		out = append(out, "xdp")
	}
	if runtime.GOOS == "linux" {
		out = append(out, "afpacket")
	}
	return out
}

func (s *service) receiverMethods() []string {
	if !s.receives() || runtime.GOOS != "linux" {
		return nil
	}
	return []string{receiver.MethodXDP, receiver.MethodAFPacket}
}

// ifaceInfo is the interface's MAC, addresses and MTU, looked up in the
// agent's network namespace.
func (s *service) ifaceInfo(name string) (mac string, ips []string, mtu int, err error) {
	err = s.onThread(func() error {
		ifi, err := net.InterfaceByName(name)
		if err != nil {
			return err
		}
		mac, mtu = macString(ifi.HardwareAddr), ifi.MTU
		addrs, err := ifi.Addrs()
		if err != nil {
			return err
		}
		for _, a := range addrs {
			if p, err := netip.ParsePrefix(a.String()); err == nil {
				ips = append(ips, p.Addr().String())
			}
		}
		return nil
	})
	return mac, ips, mtu, err
}

func (s *service) Describe(ctx context.Context, _ *lineratev1.DescribeRequest) (*lineratev1.DescribeResponse, error) {
	inv := s.inventory()
	nic := nicToProto(s.cfg.Iface, inv.report)
	if len(nic.LocalCpus) == 0 {
		nic.LocalCpus = i32s(inv.online) // a virtual device is local to every CPU
	}
	nic.LinkSpeedMbps = inv.speed
	if inv.err != nil {
		nic.Warnings = append(nic.Warnings, "no NIC topology: "+inv.err.Error())
	}
	mac, ips, mtu, err := s.ifaceInfo(s.cfg.Iface)
	if err != nil {
		nic.Warnings = append(nic.Warnings, fmt.Sprintf("interface %s: %v", s.cfg.Iface, err))
	}
	nic.Mac, nic.DataIps, nic.Mtu = mac, ips, int32(mtu)
	var drv driverInfo
	if err := s.onThread(func() (err error) { drv, err = s.cfg.netOS.driverInfo(s.cfg.Iface); return err }); err == nil {
		nic.Firmware = drv.firmware
		if nic.Driver == "" {
			nic.Driver = drv.driver // a virtual device: topology found none
		}
	}
	nic.Model = topology.PCIModel(s.root, s.cfg.Iface)
	host, _ := os.Hostname()
	resp := &lineratev1.DescribeResponse{
		HostName: host, Kernel: kernelRelease(), Version: s.cfg.Version, Role: roleToProto(s.cfg.Role),
		Nic: nic, Backends: s.backends(), ReceiverMethods: s.receiverMethods(),
	}
	s.mu.Lock()
	if l := s.lease; l != nil && time.Now().Before(l.expires) {
		resp.Lease = &lineratev1.LeaseInfo{CoordinatorId: l.coordinator, ExpiresAt: ts(l.expires)}
	}
	s.mu.Unlock()
	return resp, nil
}

// ---- leases

func (s *service) clampTTL(d *durationpb.Duration, def time.Duration) (time.Duration, error) {
	if d == nil {
		return def, nil
	}
	if err := d.CheckValid(); err != nil {
		return 0, status.Errorf(codes.InvalidArgument, "ttl: %v", err)
	}
	t := d.AsDuration()
	if t <= 0 {
		return 0, status.Errorf(codes.InvalidArgument, "ttl %s: want a positive duration (%s-%s)", t, s.cfg.MinLeaseTTL, s.cfg.MaxLeaseTTL)
	}
	return min(max(t, s.cfg.MinLeaseTTL), s.cfg.MaxLeaseTTL), nil
}

func newLeaseID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// checkLease refuses a lease id that is not the current, unexpired lease.
// Callers hold s.mu.
func (s *service) checkLease(id string) error {
	if s.closed {
		return status.Error(codes.Unavailable, "the agent is shutting down")
	}
	l := s.lease
	switch {
	case id == "":
		return status.Error(codes.FailedPrecondition, "lease_id: missing: acquire a lease first (AcquireLease)")
	case l == nil || l.id != id:
		return status.Error(codes.FailedPrecondition, "lease_id: not the agent's current lease (unknown, released or expired)")
	case !time.Now().Before(l.expires):
		return status.Error(codes.FailedPrecondition, "lease_id: the lease has expired")
	}
	return nil
}

// armTimer (re)starts the expiry timer of l. Callers hold s.mu.
func (s *service) armTimer(l *lease) {
	if l.timer != nil {
		l.timer.Stop()
	}
	id := l.id
	l.timer = time.AfterFunc(time.Until(l.expires), func() { s.expire(id) })
}

// expire ends lease id if it is still current and past its expiry.
func (s *service) expire(id string) {
	s.mu.Lock()
	l := s.lease
	if l == nil || l.id != id {
		s.mu.Unlock()
		return
	}
	if wait := time.Until(l.expires); wait > 0 { // renewed meanwhile
		l.timer = time.AfterFunc(wait, func() { s.expire(id) })
		s.mu.Unlock()
		return
	}
	s.lease = nil
	s.mu.Unlock()
	s.log.Warn("lease expired: stopping, disarming and restoring the host", "coordinator", l.coordinator)
	if _, _, err := s.endRun(context.Background(), true); err != nil {
		s.log.Error("cleaning up after an expired lease", "error", err)
	}
}

func (s *service) AcquireLease(_ context.Context, req *lineratev1.AcquireLeaseRequest) (*lineratev1.AcquireLeaseResponse, error) {
	if req.CoordinatorId == "" {
		return nil, status.Error(codes.InvalidArgument, "coordinator_id: missing: name the coordinator asking")
	}
	s.mu.Lock()
	if l := s.lease; l != nil && !time.Now().Before(l.expires) {
		// Expired, its timer not run yet: clean up as the timer would
		// before anyone gets a new lease.
		s.mu.Unlock()
		s.expire(l.id)
		s.mu.Lock()
	}
	defer s.mu.Unlock()
	if s.closed {
		return nil, status.Error(codes.Unavailable, "the agent is shutting down")
	}
	now := time.Now()
	l := s.lease
	if l != nil && now.Before(l.expires) && l.coordinator != req.CoordinatorId {
		return nil, status.Errorf(codes.AlreadyExists, "agent is leased to coordinator %q until %s", l.coordinator, l.expires.UTC().Format(time.RFC3339Nano))
	}
	def := s.cfg.LeaseTTL
	if l != nil && l.coordinator == req.CoordinatorId && now.Before(l.expires) {
		def = l.ttl
	} else {
		l = nil
	}
	ttl, err := s.clampTTL(req.Ttl, def)
	if err != nil {
		return nil, err
	}
	if l == nil {
		l = &lease{id: newLeaseID(), coordinator: req.CoordinatorId}
		s.lease = l
		s.log.Info("lease acquired", "coordinator", req.CoordinatorId, "ttl", ttl)
	}
	l.ttl, l.expires = ttl, now.Add(ttl)
	s.armTimer(l)
	return &lineratev1.AcquireLeaseResponse{LeaseId: l.id, ExpiresAt: ts(l.expires), Ttl: durationpb.New(ttl)}, nil
}

func (s *service) RenewLease(_ context.Context, req *lineratev1.RenewLeaseRequest) (*lineratev1.RenewLeaseResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.checkLease(req.LeaseId); err != nil {
		return nil, err
	}
	l := s.lease
	ttl, err := s.clampTTL(req.Ttl, l.ttl)
	if err != nil {
		return nil, err
	}
	l.ttl, l.expires = ttl, time.Now().Add(ttl)
	s.armTimer(l)
	return &lineratev1.RenewLeaseResponse{ExpiresAt: ts(l.expires), Ttl: durationpb.New(ttl)}, nil
}

func (s *service) ReleaseLease(ctx context.Context, req *lineratev1.ReleaseLeaseRequest) (*lineratev1.ReleaseLeaseResponse, error) {
	s.mu.Lock()
	l := s.lease
	if l == nil || l.id != req.LeaseId {
		s.mu.Unlock()
		return &lineratev1.ReleaseLeaseResponse{}, nil // already gone
	}
	l.timer.Stop()
	s.lease = nil
	s.mu.Unlock()
	s.log.Info("lease released", "coordinator", l.coordinator, "keep_tuning", req.KeepTuning)
	changes, warnings, err := s.endRun(ctx, !req.KeepTuning)
	if err != nil {
		return nil, status.Errorf(codes.Internal, "release: %v", err)
	}
	return &lineratev1.ReleaseLeaseResponse{Changes: changesToProto(changes), Warnings: warnings}, nil
}

// endRun stops a send, disarms the receiver and, with restore, restores
// the journal: what the end of a lease does.
func (s *service) endRun(ctx context.Context, restore bool) ([]topology.Change, []string, error) {
	var errs []error
	s.mu.Lock()
	run, rx := s.send, s.recv
	s.recv = nil
	var cancel context.CancelFunc
	var done chan struct{}
	if run != nil {
		cancel, done = run.cancel, run.done
	}
	s.mu.Unlock()
	if done != nil {
		cancel()
		select {
		case <-done:
		case <-ctx.Done():
			errs = append(errs, fmt.Errorf("stop the send: %w", ctx.Err()))
		}
	}
	if rx != nil {
		rx.cancel()
		err := rx.rx.Close()
		s.metrics.runEnded(runReceiver, err)
		if err != nil {
			errs = append(errs, fmt.Errorf("disarm the receiver: %w", err))
		}
	}
	s.mu.Lock()
	if s.send == run {
		s.send = nil
	}
	s.notify()
	s.mu.Unlock()
	if !restore {
		return nil, nil, errors.Join(errs...)
	}
	changes, warnings, err := s.restore(ctx)
	if err != nil {
		errs = append(errs, err)
	}
	return changes, warnings, errors.Join(errs...)
}

// restore puts back the journal of the agent's interface.
func (s *service) restore(ctx context.Context) ([]topology.Change, []string, error) {
	res, err := topology.Restore(ctx, s.root, topology.RestoreOptions{StateDir: s.cfg.StateDir, Iface: s.cfg.Iface, RootName: s.cfg.Root, Logger: s.log})
	var changes []topology.Change
	var warnings []string
	for _, r := range res {
		changes = append(changes, r.Changes...)
		warnings = append(warnings, r.Warnings...)
		s.log.Info("restored IRQ affinities", "iface", r.Iface, "changes", len(r.Changes))
	}
	s.mu.Lock()
	s.tuned, s.queues, s.pinned = nil, nil, 0
	s.mu.Unlock()
	if err != nil {
		return changes, warnings, fmt.Errorf("restore %s from %s: %w", s.cfg.Iface, s.cfg.StateDir, err)
	}
	return changes, warnings, nil
}

// close is the agent's shutdown: end any run, restore, stop watchers.
func (s *service) close(ctx context.Context) error {
	s.mu.Lock()
	s.closed = true
	if s.lease != nil {
		s.lease.timer.Stop()
		s.lease = nil
	}
	s.mu.Unlock()
	_, _, err := s.endRun(ctx, true)
	s.cancel()
	return err
}

// ---- tuning

func (s *service) Tune(ctx context.Context, req *lineratev1.TuneRequest) (*lineratev1.TuneResponse, error) {
	s.mu.Lock()
	err := s.checkLease(req.LeaseId)
	s.mu.Unlock()
	if err != nil {
		return nil, err
	}
	if req.Threads < 0 {
		return nil, status.Errorf(codes.InvalidArgument, "threads %d: want 0 (every queue) or more", req.Threads)
	}
	irqb := req.Irqbalance
	switch irqb {
	case "", topology.IRQBalanceRefuse, "ignore":
	default:
		return nil, status.Errorf(codes.InvalidArgument, "irqbalance %q: valid values are refuse and ignore", irqb)
	}
	nic, err := topology.Inspect(s.root, s.cfg.Iface)
	if err != nil {
		return nil, status.Errorf(codes.FailedPrecondition, "tune: inspect %s: %v", s.cfg.Iface, err)
	}
	var exclude cpuset.Set
	for _, c := range req.ExcludeCpus {
		if c < 0 {
			return nil, status.Errorf(codes.InvalidArgument, "exclude_cpus: %d is not a CPU", c)
		}
		exclude = exclude.Union(cpuset.Of(int(c)))
	}
	plan, err := topology.MakePlan(nic, topology.PlanOptions{Threads: int(req.Threads), Exclude: exclude})
	if err != nil {
		if errors.Is(err, topology.ErrTooManyThreads) {
			return nil, status.Errorf(codes.InvalidArgument, "threads: %v", err)
		}
		return nil, status.Errorf(codes.FailedPrecondition, "tune: plan %s: %v", s.cfg.Iface, err)
	}
	res, err := topology.Apply(ctx, s.root, plan, topology.ApplyOptions{StateDir: s.cfg.StateDir, IRQBalance: irqb, RootName: s.cfg.Root, Logger: s.log})
	if err != nil {
		if errors.Is(err, topology.ErrIRQBalance) {
			return nil, status.Errorf(codes.FailedPrecondition, "tune: %v", err)
		}
		return nil, status.Errorf(codes.Internal, "tune: apply %s: %v", s.cfg.Iface, err)
	}
	rep := topology.PlanReport(plan)
	pinned, managed := mappingsToProto(rep, res.Changes)
	var cpus, queues []int
	seen := map[int32]bool{}
	for _, m := range pinned {
		if !seen[m.Queue] {
			seen[m.Queue] = true
			cpus, queues = append(cpus, int(m.Cpu)), append(queues, int(m.Queue))
		}
	}
	s.mu.Lock()
	s.tuned, s.queues, s.pinned = cpus, queues, len(pinned)
	s.mu.Unlock()
	s.log.Info("tuned", "iface", s.cfg.Iface, "journal", res.Journal, "cpus", cpus)
	return &lineratev1.TuneResponse{
		Iface: s.cfg.Iface, Journal: res.Journal, NumaNode: int32(nic.NUMANode), IrqMap: pinned, Managed: managed,
		Skipped: skippedToProto(rep.Skipped), Changes: changesToProto(res.Changes), Warnings: append(plan.Warnings, res.Warnings...),
	}, nil
}

func (s *service) Restore(ctx context.Context, req *lineratev1.RestoreRequest) (*lineratev1.RestoreResponse, error) {
	s.mu.Lock()
	err := s.checkLease(req.LeaseId)
	s.mu.Unlock()
	if err != nil {
		return nil, err
	}
	changes, warnings, err := s.restore(ctx)
	if err != nil {
		return nil, status.Errorf(codes.Internal, "%v", err)
	}
	return &lineratev1.RestoreResponse{Iface: s.cfg.Iface, Changes: changesToProto(changes), Warnings: warnings}, nil
}

// ---- receiver

func (s *service) Arm(_ context.Context, req *lineratev1.ArmRequest) (*lineratev1.ArmResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.checkLease(req.LeaseId); err != nil {
		return nil, err
	}
	if !s.receives() {
		return nil, status.Errorf(codes.FailedPrecondition, "arm: the agent's role is %s, not a receiver", s.cfg.Role)
	}
	o := receiver.Options{
		Iface: req.Iface, Method: req.Method, Pass: req.Pass, Repeats: int(req.Repeats), SeqCapacity: req.SeqCapacity,
		MaxStreams: int(req.MaxStreams), MaxRanges: int(req.MaxRanges), Logger: s.log.Named("receiver"),
	}
	if o.Iface == "" {
		o.Iface = s.cfg.Iface
	}
	if o.Method == "" {
		o.Method = receiver.MethodAuto
	}
	if old := s.recv; old != nil { // re-arming discards what was counted
		old.cancel()
		s.metrics.runEnded(runReceiver, old.rx.Close())
		s.recv = nil
	}
	ctx, cancel := context.WithCancel(s.base)
	var rx *receiver.Receiver
	err := s.onThread(func() error {
		var err error
		rx, err = receiver.Start(ctx, o)
		return err
	})
	if err != nil {
		cancel()
		switch {
		case errors.Is(err, receiver.ErrOptions):
			return nil, status.Errorf(codes.InvalidArgument, "arm: %v", err)
		default:
			return nil, status.Errorf(codes.FailedPrecondition, "arm %s: %v", o.Iface, err)
		}
	}
	s.recv = &armed{rx: rx, cancel: cancel, at: time.Now()}
	s.metrics.runsStarted.WithLabelValues(runReceiver).Inc()
	s.notify()
	m, why := rx.Method()
	s.log.Info("receiver armed", "iface", o.Iface, "method", m, "why", why)
	return &lineratev1.ArmResponse{Armed: true, Method: m, MethodReason: why, ArmedAt: ts(s.recv.at)}, nil
}

func (s *service) Collect(_ context.Context, req *lineratev1.CollectRequest) (*lineratev1.CollectResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.checkLease(req.LeaseId); err != nil {
		return nil, err
	}
	a := s.recv
	if a == nil {
		return nil, status.Error(codes.FailedPrecondition, "collect: the receiver is not armed (Arm first)")
	}
	if req.KeepArmed {
		rep := a.rx.Snapshot()
		s.metrics.countReceived(a, rep.TestPackets())
		return &lineratev1.CollectResponse{Report: reportToProto(&rep), CollectedAt: ts(time.Now())}, nil
	}
	rep, err := a.rx.Stop()
	a.cancel()
	s.recv = nil
	s.notify()
	s.metrics.runEnded(runReceiver, err)
	if err != nil {
		return nil, status.Errorf(codes.Internal, "collect: stop the receiver: %v", err)
	}
	s.metrics.countReceived(a, rep.TestPackets())
	return &lineratev1.CollectResponse{Report: reportToProto(rep), CollectedAt: ts(time.Now())}, nil
}

// ---- sender

func (s *service) Configure(ctx context.Context, req *lineratev1.ConfigureRequest) (*lineratev1.ConfigureResponse, error) {
	s.mu.Lock()
	if err := s.checkLease(req.LeaseId); err != nil {
		s.mu.Unlock()
		return nil, err
	}
	if !s.sends() {
		s.mu.Unlock()
		return nil, status.Errorf(codes.FailedPrecondition, "configure: the agent's role is %s, not a sender", s.cfg.Role)
	}
	if r := s.send; r != nil && (r.phase == lineratev1.Phase_PHASE_SCHEDULED || r.phase == lineratev1.Phase_PHASE_RUNNING) {
		s.mu.Unlock()
		return nil, status.Error(codes.FailedPrecondition, "configure: a send is running (Stop it first)")
	}
	tuned, tunedQueues := s.tuned, s.queues
	s.mu.Unlock()

	cfg, err := senderConfigFromProto(req.Config)
	if err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "%v", err)
	}
	var warnings []string
	if cfg.Device == "" {
		cfg.Device = s.cfg.Iface
	}
	if len(cfg.CPUs) == 0 {
		cfg.CPUs = append([]int(nil), tuned...)
		if len(cfg.Queues) == 0 && len(tunedQueues) > 0 {
			cfg.Queues = append([]int(nil), tunedQueues...) // thread i on queue i, whose IRQ is on its CPU
		}
		if len(cfg.CPUs) == 0 {
			cfg.CPUs = []int{0}
			warnings = append(warnings, "config.cpus: not given and nothing tuned: one thread on CPU 0")
		}
	}
	if !cfg.DstMin.IsValid() {
		return nil, status.Error(codes.InvalidArgument, "config.dst_min: missing: the receiver's address")
	}
	if len(cfg.DstMAC) == 0 {
		return nil, status.Error(codes.InvalidArgument, "config.dst_mac: missing: the receiver's MAC (Describe's nic.mac)")
	}
	if !cfg.SrcMin.IsValid() {
		_, ips, _, err := s.ifaceInfo(cfg.Device)
		if err != nil {
			return nil, status.Errorf(codes.FailedPrecondition, "config.device %s: %v", cfg.Device, err)
		}
		for _, ip := range ips {
			if a, err := netip.ParseAddr(ip); err == nil && a.Is4() == cfg.DstMin.Is4() {
				cfg.SrcMin = a
				break
			}
		}
		if !cfg.SrcMin.IsValid() {
			return nil, status.Errorf(codes.InvalidArgument, "config.src_min: missing, and %s has no address of the destination's family", cfg.Device)
		}
	}
	var be pktgen.Backend
	var why string
	if s.cfg.Backend != nil {
		be, why = s.cfg.Backend, "the agent's configured generator"
	} else {
		be, why, err = choose.Backend(req.Config.Backend, cfg.Device, choose.Options{Log: s.log, ThreadInit: s.cfg.ThreadInit})
	}
	switch {
	case errors.Is(err, choose.ErrUnknown):
		return nil, status.Errorf(codes.InvalidArgument, "config.backend: %v", err)
	case err != nil:
		return nil, status.Errorf(codes.FailedPrecondition, "config.backend: %v", err)
	}
	name := be.Name()
	s.log.Debug("backend chosen", "backend", name, "why", why)
	if err := cfg.Validate(); err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "%v", err)
	}
	if name != "kernel" {
		if err := cfg.UserspaceCheck(name); err != nil {
			return nil, status.Errorf(codes.InvalidArgument, "%v", err)
		}
	}
	gossip := s.cfg.Bind != ""
	err = checkDestinations(&cfg, targetsOf(s.members()), s.cfg.AllowDst, gossip)
	// A receiver that joined a moment ago may not have reached this
	// agent by gossip yet: look again for a few seconds before refusing.
	for deadline := time.Now().Add(destinationSettle); err != nil && gossip && time.Now().Before(deadline); {
		select {
		case <-ctx.Done():
			return nil, status.FromContextError(ctx.Err()).Err()
		case <-time.After(100 * time.Millisecond):
		}
		err = checkDestinations(&cfg, targetsOf(s.members()), s.cfg.AllowDst, gossip)
	}
	if err != nil {
		s.log.Warn("configure refused", "error", err)
		return nil, status.Errorf(codes.PermissionDenied, "configure: %v", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.checkLease(req.LeaseId); err != nil {
		return nil, err
	}
	if r := s.send; r != nil && (r.phase == lineratev1.Phase_PHASE_SCHEDULED || r.phase == lineratev1.Phase_PHASE_RUNNING) {
		return nil, status.Error(codes.FailedPrecondition, "configure: a send is running (Stop it first)")
	}
	s.send = &sendRun{cfg: cfg, backend: be, phase: lineratev1.Phase_PHASE_CONFIGURED}
	s.notify()
	s.log.Info("sender configured", "backend", name, "device", cfg.Device, "cpus", cfg.CPUs, "dst", cfg.DstMin)
	return &lineratev1.ConfigureResponse{Accepted: true, Backend: name, Config: senderConfigToProto(&cfg, name), Warnings: warnings}, nil
}

func (s *service) Start(ctx context.Context, req *lineratev1.StartRequest) (*lineratev1.StartResponse, error) {
	at := time.Now()
	if req.At != nil {
		if err := req.At.CheckValid(); err != nil {
			return nil, status.Errorf(codes.InvalidArgument, "at: %v", err)
		}
		at = req.At.AsTime()
	}
	if time.Until(at) > maxStartAhead {
		return nil, status.Errorf(codes.InvalidArgument, "at %s: more than %s ahead", at.UTC().Format(time.RFC3339Nano), maxStartAhead)
	}
	s.mu.Lock()
	if err := s.checkLease(req.LeaseId); err != nil {
		s.mu.Unlock()
		return nil, err
	}
	r := s.send
	if r == nil || r.phase != lineratev1.Phase_PHASE_CONFIGURED {
		s.mu.Unlock()
		return nil, status.Error(codes.FailedPrecondition, "start: no configured run (Configure first; a finished run needs Configure again)")
	}
	runCtx, cancel := context.WithCancel(s.base)
	r.phase, r.cancel, r.done = lineratev1.Phase_PHASE_SCHEDULED, cancel, make(chan struct{})
	s.metrics.runsStarted.WithLabelValues(runSender).Inc()
	s.notify()
	s.mu.Unlock()

	// The device's tx_dropped now, not once the instant has come: the
	// read (netlink, maybe on a thread in another namespace) would start
	// the senders late.
	var tx0 uint64
	tx0Err := s.onThread(func() (err error) { tx0, err = s.cfg.netOS.txDropped(r.cfg.Device); return err })
	if wait := time.Until(at); wait > 0 {
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			s.finish(r, nil, status.FromContextError(ctx.Err()).Err())
			return nil, status.Errorf(codes.Canceled, "start: the call ended before %s", at)
		case <-runCtx.Done():
			t.Stop()
			s.finish(r, nil, nil)
			return nil, status.Error(codes.Aborted, "start: stopped before the start instant")
		}
	}
	s.mu.Lock()
	r.phase, r.started = lineratev1.Phase_PHASE_RUNNING, time.Now()
	started := r.started
	s.notify()
	s.mu.Unlock()
	go func() {
		sum, err := r.backend.Run(runCtx, r.cfg, func(p pktgen.Progress) {
			p.Threads = append([]pktgen.ThreadProgress(nil), p.Threads...) // the backend may reuse it
			s.mu.Lock()
			r.progress = p
			s.metrics.countSent(r, p.Packets, p.Errors)
			s.mu.Unlock()
		})
		// Frames the host dropped after the backend counted them, on
		// record before finish lets Result answer.
		var tx1 uint64
		tx1Err := s.onThread(func() (err error) { tx1, err = s.cfg.netOS.txDropped(r.cfg.Device); return err })
		if tx0Err != nil || tx1Err != nil {
			s.log.Warn("tx_dropped of the device not read: the sender host's drops are unknown", "device", r.cfg.Device, "error", errors.Join(tx0Err, tx1Err))
		} else {
			s.mu.Lock()
			r.txDropped, r.txDroppedOK = tx1-min(tx0, tx1), true
			s.mu.Unlock()
		}
		s.finish(r, sum, err)
	}()
	return &lineratev1.StartResponse{StartedAt: ts(started)}, nil
}

// finish records the end of run r.
func (s *service) finish(r *sendRun, sum *pktgen.Summary, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r.stopped, r.summary, r.err = time.Now(), sum, err
	if sum != nil {
		s.metrics.countSent(r, sum.Packets, sum.Errors)
	}
	s.metrics.runEnded(runSender, err)
	if err != nil {
		r.phase = lineratev1.Phase_PHASE_FAILED
		s.log.Error("send failed", "error", err)
	} else {
		r.phase = lineratev1.Phase_PHASE_DONE
		if sum != nil {
			s.log.Info("send done", "packets", sum.Packets, "errors", sum.Errors, "pps", sum.PPS)
		}
	}
	r.cancel()
	close(r.done)
	s.notify()
}

// startedRun is the send the lease holder started (nil when none was).
func (s *service) startedRun(lease string) (*sendRun, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.checkLease(lease); err != nil {
		return nil, err
	}
	if r := s.send; r != nil && r.done != nil {
		return r, nil
	}
	return nil, nil
}

func (s *service) Stop(ctx context.Context, req *lineratev1.StopRequest) (*lineratev1.StopResponse, error) {
	r, err := s.startedRun(req.LeaseId)
	if err != nil {
		return nil, err
	}
	if r == nil {
		return &lineratev1.StopResponse{Stopped: false}, nil
	}
	cancel, done := r.cancel, r.done // set once by Start
	select {
	case <-done:
		return &lineratev1.StopResponse{Stopped: false}, nil
	default:
	}
	cancel()
	select {
	case <-done:
	case <-ctx.Done():
		return nil, status.FromContextError(ctx.Err()).Err()
	}
	s.mu.Lock()
	stopped := r.stopped
	s.mu.Unlock()
	return &lineratev1.StopResponse{Stopped: true, StoppedAt: ts(stopped)}, nil
}

func (s *service) Result(ctx context.Context, req *lineratev1.ResultRequest) (*lineratev1.ResultResponse, error) {
	r, err := s.startedRun(req.LeaseId)
	if err != nil {
		return nil, err
	}
	if r == nil {
		return nil, status.Error(codes.FailedPrecondition, "result: no run started (Configure and Start first)")
	}
	done := r.done
	if req.Wait {
		select {
		case <-done:
		case <-ctx.Done():
			return nil, status.FromContextError(ctx.Err()).Err()
		}
	} else {
		select {
		case <-done:
		default:
			return nil, status.Error(codes.FailedPrecondition, "result: the run is still going (wait, or Stop it)")
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if r.err != nil {
		return nil, status.Errorf(codes.Internal, "result: the run failed: %v", r.err)
	}
	sum := summaryToProto(r.summary)
	if sum != nil && r.txDroppedOK {
		sum.TxDropped = r.txDropped
	}
	return &lineratev1.ResultResponse{Summary: sum, StartedAt: ts(r.started), StoppedAt: ts(r.stopped)}, nil
}

// ---- watch

func (s *service) Watch(req *lineratev1.WatchRequest, stream grpc.ServerStreamingServer[lineratev1.WatchResponse]) error {
	interval := time.Second
	if req.Interval != nil {
		if err := req.Interval.CheckValid(); err != nil {
			return status.Errorf(codes.InvalidArgument, "interval: %v", err)
		}
		interval = req.Interval.AsDuration()
	}
	interval = max(interval, minWatchInterval)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		resp, changed := s.sample()
		if err := stream.Send(resp); err != nil {
			return err
		}
		select {
		case <-t.C:
		case <-changed:
		case <-stream.Context().Done():
			return nil
		case <-s.base.Done():
			return status.Error(codes.Unavailable, "the agent is shutting down")
		}
	}
}

// sample reads the live counters, and the channel closed at the next
// phase change.
func (s *service) sample() (*lineratev1.WatchResponse, <-chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	resp := &lineratev1.WatchResponse{Time: timestamppb.Now()}
	if s.sends() {
		ss := &lineratev1.SenderSample{Phase: lineratev1.Phase_PHASE_IDLE}
		if r := s.send; r != nil {
			p := r.progress
			if r.summary != nil {
				p = pktgen.Progress{Elapsed: time.Duration(r.summary.USec) * time.Microsecond, Packets: r.summary.Packets, Errors: r.summary.Errors}
				for _, t := range r.summary.Threads {
					p.Threads = append(p.Threads, pktgen.ThreadProgress{CPU: t.CPU, Packets: t.Packets, Errors: t.Errors})
				}
			}
			if !r.started.IsZero() {
				ss = progressToSample(p, r.cfg.FrameBytes())
			}
			ss.Phase = r.phase
			if r.err != nil {
				ss.Error = r.err.Error()
			}
		}
		resp.Sender = ss
	}
	if s.receives() {
		rs := &lineratev1.ReceiverSample{Phase: lineratev1.Phase_PHASE_IDLE}
		if a := s.recv; a != nil {
			rs = snapshotToSample(a.rx.Snapshot())
			rs.Phase = lineratev1.Phase_PHASE_ARMED
			rs.Elapsed = durationpb.New(time.Since(a.at))
		}
		resp.Receiver = rs
	}
	return resp, s.changed
}
