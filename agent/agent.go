package agent

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/serf/serf"
	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/linerate/linerate/doctor"
	"github.com/linerate/linerate/internal/cluster/gossip"
	"github.com/linerate/linerate/internal/cluster/mtls"
	"github.com/linerate/linerate/internal/version"
	"github.com/linerate/linerate/pktgen"
	lineratev1 "github.com/linerate/linerate/proto/linerate/v1"
	"github.com/linerate/linerate/topology"
)

// Role is what an agent does: gossip's role, one type.
type Role = gossip.Role

// Roles an agent runs as.
const (
	RoleSender   = gossip.RoleSender
	RoleReceiver = gossip.RoleReceiver
	RoleBoth     = gossip.RoleBoth
)

// Lease bounds used when Config leaves them zero.
const (
	DefaultLeaseTTL = 30 * time.Second
	DefaultMinTTL   = time.Second
	DefaultMaxTTL   = 10 * time.Minute
)

// DefaultReceiverMemory is the receiver's memory budget when
// Config.ReceiverMemory is 0 (`linerate agent --receiver-memory`): 512 MiB,
// about 1,000 streams at the receiver's default window (2^21 sequences,
// 512 KiB each, and their state on every CPU: receiver.Options.MemoryBytes),
// whatever the run's length and whichever method counts.
const DefaultReceiverMemory = 512 << 20

// Config is one agent.
type Config struct {
	// Name is the serf node name and the name in Describe; default the
	// host name.
	Name string
	// Role is RoleSender, RoleReceiver or RoleBoth.
	Role Role
	// Iface is the data interface the agent owns.
	Iface string
	// Bind is the gossip address (host:port, port 0 = any; no host = the
	// management address, mgmtaddr.go); empty runs without serf (single
	// host, tests).
	Bind string
	// Advertise is the gossip address others reach this agent on; default
	// Bind's.
	Advertise string
	// GRPCAddr is where the Agent service listens (host:port, port 0 =
	// any; no host = the management address); default ":7443".
	GRPCAddr string
	// Join are serf members to join at start (host:port): each attempt
	// tries them in a random order until one answers, so give several
	// seeds that one down or overloaded does not matter. When none answers the agent keeps retrying in the
	// background (JoinRetry doubling up to JoinRetryMax, with jitter)
	// until one does; it never exits for it.
	Join []string
	// JoinRetry is the first wait before a failed join is retried
	// (default DefaultJoinRetry); JoinRetryMax the longest (default
	// DefaultJoinRetryMax).
	JoinRetry, JoinRetryMax time.Duration
	// GossipKey encrypts and authenticates gossip: 16, 24 or 32 bytes
	// (AES-GCM). With gossip (Bind set) it is required unless
	// InsecureGossip, which gossips in plaintext and is logged as a
	// warning at every start.
	GossipKey      []byte
	InsecureGossip bool
	// TLSDir is the certificate directory with TLSName.crt; Insecure
	// serves plaintext instead (logged as a warning at every start).
	TLSDir   string
	TLSName  string // default Name
	Insecure bool
	// AllowCAKey serves, and asks receivers, from a TLSDir that holds
	// ca.key (the CA's own machine); otherwise that, like a key others
	// can read, is refused.
	AllowCAKey bool
	// StateDir holds the tuning journals; default topology.DefaultStateDir.
	StateDir string
	// Root is the host root topology reads and tunes; default "/".
	Root string
	// Version is the agent binary's version; default version.String(),
	// the build's.
	Version string
	// Lease TTL bounds: default, and the range a requested TTL is clamped
	// to.
	LeaseTTL, MinLeaseTTL, MaxLeaseTTL time.Duration
	// AllowDst are destination ranges a sender may send to although no
	// receiver of its cluster announces them (routed paths, sinks that run
	// no agent); inside them dst_mac is not checked against a receiver's
	// (a group MAC is still refused).
	AllowDst []netip.Prefix
	// AllowDstAny lets AllowDst hold a prefix shorter than
	// MinAllowDstBits (0.0.0.0/0, ::/0): refused without it, warned at
	// every start with it.
	AllowDstAny bool
	// AllowMgmtIface lets the agent send from, count on and tune an
	// interface that carries the default route or the control traffic
	// (gRPC, gossip).
	AllowMgmtIface bool
	// AllowSrcMACs are source MACs a sender may put in its frames besides
	// its device's own (config.src_mac); none by default.
	AllowSrcMACs []net.HardwareAddr
	// AllowVLANs are the VLAN ids a sender may tag its frames with
	// (config.vlan_id), and a receiver its reflections (an Arm's
	// reflect_vlan); none by default.
	AllowVLANs []int
	// AllowFixes are the fix classes a Tune may apply (a run's
	// --preflight fix); none by default: the host's operator opts in, as
	// with AllowDst.
	AllowFixes []doctor.FixClass
	// KnownChecks are the checks whose WARN this host's operator accepts
	// as known, each with why (--known-check): Describe answers them as
	// KNOWN, shown in a run's report and no warning of it. None by
	// default.
	KnownChecks []doctor.KnownCheck
	// MetricsAddr, when set, serves Prometheus metrics at /metrics
	// (host:port, port 0 = any).
	MetricsAddr string
	// ReceiverMemory is the receiver's memory budget in bytes: the most
	// per-stream state (receiver.Options.MemoryBytes on this host's CPUs,
	// whichever method, AF_PACKET or XDP, counts) an Arm may ask for;
	// Describe announces it so a coordinator refuses a plan over it before
	// leasing. Default DefaultReceiverMemory.
	ReceiverMemory uint64
	// MaxRunLength is the longest send Configure accepts: its duration,
	// or the length its per-thread count and rate derive. Default
	// DefaultMaxRunLength.
	MaxRunLength time.Duration
	// Backend, when set, is the generator every send uses instead of the
	// one "auto" or the coordinator's choice would pick: an embedding
	// program's own generator, or a stand-in in tests that time the
	// control plane without traffic.
	Backend pktgen.Backend
	// ThreadInit, when set, runs on a locked OS thread before anything that
	// depends on the network namespace (interface lookups, the receiver,
	// the userspace senders): tests use it to run an agent against a
	// namespace.
	ThreadInit func() error
	Logger     hclog.Logger

	// serfHook adjusts serf's configuration before it starts (tests:
	// shorter timers on loopback).
	serfHook func(*serf.Config)
	// netOS reads routes and addresses for the management-interface
	// check; nil is the host's (netlink).
	netOS netOS
	// clock reads the host's clock discipline (tests replace it).
	clock clockReader
}

func (c *Config) defaults() error {
	if _, err := gossip.ParseAgentRole(string(c.Role)); err != nil {
		return err
	}
	if c.Iface == "" {
		return errors.New("no data interface (--iface)")
	}
	if c.Name == "" {
		h, err := os.Hostname()
		if err != nil {
			return fmt.Errorf("node name: %w", err)
		}
		c.Name = h
	}
	if c.TLSName == "" {
		c.TLSName = c.Name
	}
	if c.GRPCAddr == "" {
		c.GRPCAddr = ":7443"
	}
	if c.StateDir == "" {
		c.StateDir = topology.DefaultStateDir
	}
	if c.Root == "" {
		c.Root = "/"
	}
	if c.Version == "" {
		c.Version = version.String()
	}
	if c.ReceiverMemory == 0 {
		c.ReceiverMemory = DefaultReceiverMemory
	}
	if c.MaxRunLength <= 0 {
		c.MaxRunLength = DefaultMaxRunLength
	}
	if c.JoinRetry <= 0 {
		c.JoinRetry = DefaultJoinRetry
	}
	if c.JoinRetryMax <= 0 {
		c.JoinRetryMax = DefaultJoinRetryMax
	}
	c.JoinRetryMax = max(c.JoinRetryMax, c.JoinRetry)
	if c.LeaseTTL == 0 {
		c.LeaseTTL = DefaultLeaseTTL
	}
	if c.MinLeaseTTL == 0 {
		c.MinLeaseTTL = DefaultMinTTL
	}
	if c.MaxLeaseTTL == 0 {
		c.MaxLeaseTTL = DefaultMaxTTL
	}
	if c.Logger == nil {
		c.Logger = hclog.NewNullLogger()
	}
	if err := gossip.CheckKey(c.GossipKey); err != nil {
		return err
	}
	if c.Bind != "" && len(c.GossipKey) == 0 && !c.InsecureGossip {
		return gossip.NoKeyError(c.TLSDir)
	}
	c.AllowDst = append([]netip.Prefix(nil), c.AllowDst...) // masked below: not the caller's
	for i, p := range c.AllowDst {
		if !p.IsValid() {
			return fmt.Errorf("allowed destination %d: not a CIDR: want one such as 198.18.0.0/15", i)
		}
		c.AllowDst[i] = p.Masked()
	}
	c.AllowSrcMACs, c.AllowVLANs = slices.Clone(c.AllowSrcMACs), slices.Clone(c.AllowVLANs)
	c.AllowFixes = slices.Clone(c.AllowFixes)
	for _, f := range c.AllowFixes {
		if err := f.Check(); err != nil {
			return fmt.Errorf("allowed fixes: %w", err)
		}
	}
	c.KnownChecks = slices.Clone(c.KnownChecks)
	for _, k := range c.KnownChecks {
		if err := k.Check(); err != nil {
			return fmt.Errorf("known check: %w", err)
		}
	}
	if err := checkRailsConfig(c); err != nil {
		return err
	}
	if c.netOS == nil {
		c.netOS = hostNetOS{}
	}
	if c.clock == nil {
		c.clock = readHostClock
	}
	return nil
}

// Agent is one running agent.
type Agent struct {
	cfg  Config
	log  hclog.Logger
	root *topology.DirRoot
	svc  *service

	mu       sync.Mutex
	lis      net.Listener
	grpc     *grpc.Server
	health   *health.Server
	serf     *gossip.Member
	events   chan serf.Event
	served   chan struct{}
	metrics  *http.Server
	mlis     net.Listener
	mserved  chan struct{}
	admin    *adminEndpoint // the force-release socket (admin.go)
	shutdown bool
	// joinCtx ends the background join retries at shutdown.
	joinCtx    context.Context
	joinCancel context.CancelFunc
	// tls is the server's reloadable credentials (nil with Insecure).
	tls *mtls.Reloader
}

// New checks cfg and opens the host root; nothing is started.
func New(cfg Config) (*Agent, error) {
	if err := cfg.defaults(); err != nil {
		return nil, fmt.Errorf("agent config: %w", err)
	}
	if err := checkTLSDir(cfg); err != nil {
		return nil, err
	}
	root, err := topology.OpenRoot(cfg.Root)
	if err != nil {
		return nil, fmt.Errorf("agent: host root %s: %w", cfg.Root, err)
	}
	a := &Agent{cfg: cfg, log: cfg.Logger, root: root}
	a.joinCtx, a.joinCancel = context.WithCancel(context.Background())
	a.svc = newService(&a.cfg, root, cfg.Logger.Named("service"), a.Members)
	a.svc.conf.refresh = a.refreshMembers
	a.svc.mgmt.ctl = a.controlAddrs
	return a, nil
}

// refreshMembers exchanges the whole member state with the seeds it
// joined and two other alive members (serf's push-pull), so a member that
// joined a moment ago is known at once.
func (a *Agent) refreshMembers() {
	a.mu.Lock()
	s := a.serf
	a.mu.Unlock()
	if s == nil {
		return
	}
	peers := append([]string(nil), a.cfg.Join...) // the seeds know the most
	for _, m := range s.Members() {
		if len(peers) >= len(a.cfg.Join)+2 {
			break
		}
		if m.Name != a.cfg.Name && m.Status == serf.StatusAlive {
			peers = append(peers, net.JoinHostPort(m.Addr.String(), strconv.Itoa(int(m.Port))))
		}
	}
	if len(peers) == 0 {
		return
	}
	if _, err := s.Join(peers, true); err != nil {
		a.log.Debug("refresh the member list", "peers", peers, "error", err)
	}
}

// GRPCAddr is the address the Agent service listens on (after Start).
func (a *Agent) GRPCAddr() string { return a.addrOf(&a.lis) }

// addrOf is the address of *lis ("" before it listens).
func (a *Agent) addrOf(lis *net.Listener) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	if *lis == nil {
		return ""
	}
	return (*lis).Addr().String()
}

// GossipAddr is the serf address others join (after Start, "" without
// gossip).
func (a *Agent) GossipAddr() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.serf == nil {
		return ""
	}
	return a.serf.Addr()
}

// Members are the serf members this agent sees (nil without gossip).
func (a *Agent) Members() []serf.Member {
	a.mu.Lock()
	s := a.serf
	a.mu.Unlock()
	if s == nil {
		return nil
	}
	return s.Members()
}

// startAbortTimeout bounds stopping what a failed Start started (the
// gRPC server's graceful stop, then a hard one).
const startAbortTimeout = 5 * time.Second

// Start refuses a sender on a management interface (checkRails), inspects the NIC,
// restores a crashed run's journals, serves metrics, binds gossip, serves
// gRPC with health, and joins serf. On error everything started is
// stopped.
func (a *Agent) Start(ctx context.Context) (err error) {
	defer func() {
		if err != nil {
			ctx, cancel := context.WithTimeout(context.Background(), startAbortTimeout)
			defer cancel()
			a.stopTransport(ctx)
		}
	}()
	if err := a.resolveListen(ctx); err != nil {
		return err
	}
	if err := a.checkRails(ctx); err != nil {
		return err
	}
	a.svc.inv.inspect()
	a.restoreJournals(ctx)
	a.svc.metrics.setInfo(a.cfg, a.svc.inv.backends())
	admin, err := startAdmin(AdminSocket(a.cfg.StateDir, a.cfg.Name), a.svc, a.log)
	if err != nil {
		return err
	}
	a.mu.Lock()
	a.admin = admin
	a.mu.Unlock()
	if a.cfg.MetricsAddr != "" {
		if err := a.startMetrics(); err != nil {
			return err
		}
	}

	if a.cfg.Insecure {
		a.log.Warn(mtls.InsecureWarning)
		a.log.Warn(insecureLeaseWarning)
	}
	creds, err := a.serverCredentials()
	if err != nil {
		return fmt.Errorf("agent gRPC credentials: %w", err)
	}
	// Gossip is bound before the Agent service's port opens, and the
	// seeds are joined only once it serves: whoever finds the gRPC port
	// open (a lab, a probe, a person) can join the agent's gossip at once,
	// and a coordinator that learns of the agent by gossip can call it.
	lis, err := a.listenGRPCAfterGossip()
	if err != nil {
		return err
	}
	// Recovery first, so a panic in any later interceptor is caught too;
	// then the audit line of every call (audit.go: it sees every later
	// refusal), who may call what (peers.go), then every request's bounds
	// (bounds.go), before any handler.
	bounds := a.svc.bounds()
	rec := recovery{log: a.log.Named("grpc")}
	srv := grpc.NewServer(append(mtls.ServerOptions(creds),
		grpc.ChainUnaryInterceptor(rec.unary, auditInterceptor(a.log.Named("audit"), a.cfg.Insecure), callerUnary, bounds.unary),
		grpc.ChainStreamInterceptor(rec.stream, callerStream, bounds.stream))...)
	lineratev1.RegisterAgentServer(srv, a.svc)
	hs := health.NewServer()
	healthpb.RegisterHealthServer(srv, hs)
	hs.SetServingStatus("", healthpb.HealthCheckResponse_SERVING)
	hs.SetServingStatus(lineratev1.Agent_ServiceDesc.ServiceName, healthpb.HealthCheckResponse_SERVING)
	served := make(chan struct{})
	a.mu.Lock()
	a.lis, a.grpc, a.health, a.served = lis, srv, hs, served
	a.mu.Unlock()
	go func() {
		defer close(served)
		if err := srv.Serve(lis); err != nil {
			a.log.Error("gRPC server stopped", "error", err)
		}
	}()
	a.log.Info("serving the Agent service", "addr", lis.Addr().String(), "tls", !a.cfg.Insecure)
	a.joinSeeds()
	return nil
}

// listenGRPCAfterGossip binds gossip (with --bind), announcing the Agent
// service's address, then opens the service's port. The address is
// GRPCAddr's when that names a port; with port 0 only a listener knows
// the port, so then the port opens first, a moment before gossip binds.
func (a *Agent) listenGRPCAfterGossip() (net.Listener, error) {
	listen := func() (net.Listener, error) {
		lis, err := net.Listen("tcp", a.cfg.GRPCAddr)
		if err != nil {
			return nil, fmt.Errorf("agent gRPC listen %s: %w", a.cfg.GRPCAddr, err)
		}
		return lis, nil
	}
	if a.cfg.Bind == "" {
		return listen()
	}
	announce, err := net.ResolveTCPAddr("tcp", a.cfg.GRPCAddr)
	if err != nil {
		return nil, fmt.Errorf("agent gRPC address %s: %w", a.cfg.GRPCAddr, err)
	}
	var lis net.Listener
	if announce.Port == 0 {
		if lis, err = listen(); err != nil {
			return nil, err
		}
		announce = lis.Addr().(*net.TCPAddr)
	}
	if err := a.bindGossip(announce); err != nil {
		if lis != nil {
			_ = lis.Close()
		}
		return nil, err
	}
	if lis == nil {
		return listen()
	}
	return lis, nil
}

// restoreJournals puts back what a crashed run of this agent left tuned
// (its own journal only: tuner.restoreAtStart).
func (a *Agent) restoreJournals(ctx context.Context) { a.svc.tuner.restoreAtStart(ctx) }

// Shutdown ends the agent: health NOT_SERVING, stop sending, disarm,
// restore tuning from the journal, leave serf, stop gRPC (gracefully within
// ctx, then hard).
func (a *Agent) Shutdown(ctx context.Context) error {
	a.mu.Lock()
	if a.shutdown {
		a.mu.Unlock()
		return nil
	}
	a.shutdown = true
	hs := a.health
	a.mu.Unlock()
	if hs != nil {
		hs.Shutdown() // every service NOT_SERVING
	}
	var errs []error
	if err := a.svc.close(ctx); err != nil {
		errs = append(errs, err)
	}
	a.stopTransport(ctx)
	if err := a.root.Close(); err != nil {
		errs = append(errs, fmt.Errorf("close host root: %w", err))
	}
	return errors.Join(errs...)
}

// stopTransport leaves serf and stops the gRPC and metrics servers.
func (a *Agent) stopTransport(ctx context.Context) {
	a.mu.Lock()
	a.joinCancel()
	s, srv, served := a.serf, a.grpc, a.served
	msrv, mserved := a.metrics, a.mserved
	admin := a.admin
	a.serf, a.grpc, a.metrics, a.admin = nil, nil, nil, nil
	a.mu.Unlock()
	if admin != nil {
		admin.stop(ctx)
	}
	if msrv != nil {
		if err := msrv.Shutdown(ctx); err != nil {
			_ = msrv.Close()
		}
		<-mserved
	}
	if s != nil {
		if err := s.Stop(); err != nil {
			a.log.Warn("leaving the cluster", "error", err)
		}
	}
	if srv != nil {
		done := make(chan struct{})
		go func() { srv.GracefulStop(); close(done) }()
		select {
		case <-done:
		case <-ctx.Done():
			srv.Stop()
			<-done
		}
		<-served
	}
}
