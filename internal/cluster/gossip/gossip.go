package gossip

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/memberlist"
	"github.com/hashicorp/serf/serf"
)

// Config starts one serf member.
type Config struct {
	Name string
	Tags map[string]string
	// Bind is the gossip address:port (port 0 = any free port; an empty
	// host = every address).
	Bind string
	// Advertise is the address:port others reach the member on; empty
	// = Bind's.
	Advertise string
	// Key encrypts gossip (16, 24 or 32 bytes, AES); nil = plaintext.
	Key []byte
	// Events receives serf's events; the caller must drain it.
	Events chan<- serf.Event
	// Logger receives serf's and memberlist's logs (named "serf").
	Logger hclog.Logger
	// Tune adjusts serf's configuration before it starts (tests:
	// shorter timers).
	Tune func(*serf.Config)
}

// Member is a running serf member. Stop it with Stop, not Shutdown.
type Member struct {
	*serf.Serf
	log *logWriter
}

// Start creates the member; it joins nobody yet.
func Start(cfg Config) (*Member, error) {
	if err := CheckKey(cfg.Key); err != nil {
		return nil, err
	}
	host, port, err := hostPort(cfg.Bind)
	if err != nil {
		return nil, fmt.Errorf("gossip bind %q: %w", cfg.Bind, err)
	}
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	lw := newLogWriter(cfg.Logger.Named("serf"))
	conf := serf.DefaultConfig()
	conf.Init()
	conf.NodeName, conf.Tags, conf.EventCh = cfg.Name, cfg.Tags, cfg.Events
	conf.Logger, conf.LogOutput = lw.logger(), nil
	ml := conf.MemberlistConfig
	ml.Logger, ml.LogOutput = conf.Logger, nil
	ml.BindAddr, ml.BindPort = host, port
	// No LZW on gossip: memberlist compresses every packet it sends (a
	// new 64 KiB LZW table each time) and a node decompresses every one
	// it gets. Measured with 256 agents in 8 processes on 2 CPUs, that
	// was a quarter of the agents' CPU and most of their garbage: a fleet
	// joining together spent it instead of answering probes. Members
	// still read compressed packets from older versions.
	ml.EnableCompression = false
	fleetTiming(ml)
	conf.BroadcastTimeout = leaveTimeout
	if cfg.Advertise != "" {
		ah, ap, err := hostPort(cfg.Advertise)
		if err != nil {
			return nil, fmt.Errorf("gossip advertise %q: %w", cfg.Advertise, err)
		}
		ml.AdvertiseAddr, ml.AdvertisePort = ah, ap
	}
	if len(cfg.Key) > 0 {
		kr, err := memberlist.NewKeyring(nil, cfg.Key)
		if err != nil {
			return nil, fmt.Errorf("gossip keyring: %w", err)
		}
		ml.Keyring = kr
	}
	if cfg.Tune != nil {
		cfg.Tune(conf)
	}
	tr, err := newTransport(ml.BindAddr, ml.BindPort, conf.Logger.Printf)
	if err != nil {
		return nil, fmt.Errorf("start gossip on %s: %w", cfg.Bind, err)
	}
	if ml.BindPort == 0 || ml.AdvertiseAddr == "" {
		ml.AdvertisePort = tr.Port() // as memberlist does for its own transport
	}
	ml.Transport, ml.BindPort = tr, tr.Port()
	s, err := serf.Create(conf)
	if err != nil {
		_ = tr.Shutdown()
		return nil, fmt.Errorf("start gossip on %s: %w", cfg.Bind, err)
	}
	return &Member{Serf: s, log: lw}, nil
}

// Addr is the address:port others join this member at.
func (m *Member) Addr() string {
	n := m.Memberlist().LocalNode()
	return net.JoinHostPort(n.Addr.String(), strconv.Itoa(int(n.Port)))
}

// Stop leaves the cluster gracefully, so that the others see a leave and
// not a failure, and shuts gossip down. What serf and memberlist log from
// the leave on is at debug level: a leave that timed out because every
// peer was leaving too (leaveTimeout) is what stopping a fleet looks like.
func (m *Member) Stop() error {
	var errs []error
	m.log.shuttingDown()
	if err := m.Leave(); err != nil {
		errs = append(errs, fmt.Errorf("leave the cluster: %w", err))
	}
	if err := m.Shutdown(); err != nil {
		errs = append(errs, fmt.Errorf("stop gossip: %w", err))
	}
	return errors.Join(errs...)
}

// hostPort splits a gossip address; an empty host is every address.
func hostPort(addr string) (string, int, error) {
	h, p, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, err
	}
	port, err := strconv.Atoi(p)
	if err != nil || port < 0 || port > 65535 {
		return "", 0, fmt.Errorf("port %q: want 0-65535", p)
	}
	if h == "" {
		h = "0.0.0.0"
	}
	return h, port, nil
}

// leaveTimeout bounds each of a leave's two waits for its broadcast to go
// out (serf's BroadcastTimeout; its default is 5 s). A broadcast is done
// once it was sent 2·log10(N+1) times (fleetTiming), three members a
// gossip round of 200 ms: about 600 ms at 1,000 members. It times out only
// when every peer is leaving at the same moment (a whole fleet or lab
// stopped at once): memberlist then waits for a member to gossip to and
// none is left. Measured on a lab of 4 agents stopped together, each
// agent's stop took 6.5 s with serf's 5 s, all but 1.5 s of it this wait.
// A leave that times out still reaches the peers still up during serf's
// LeavePropagateDelay (1 s) and their own gossip.
const leaveTimeout = 2 * time.Second

// fleetTiming is memberlist's LAN profile made to hold on busy hosts and
// in a fleet that joins at once. A benchmark host saturates its CPUs on
// purpose (a generator at line rate, a receiver counting every packet),
// and a fleet started together floods every member with the news of
// every join: with the LAN profile's 500 ms probe timeout such members
// miss acks, are suspected, refute, and the suspicions and refutations
// are gossip of their own, until the cluster spends its CPU on gossip
// and members are declared failed that never were (a failed member ends
// a run). Measured with 1,000 agents in 8 processes on 2 CPUs: 496 of
// 1,000 alive after 3 min with the LAN profile, 822 with this one.
//   - probes every 2 s, each given 2 s to answer (LAN: 1 s, 500 ms):
//     a member is suspected after 2 s of silence, declared failed after
//     its suspicion timeout (4·log10(N)·2 s: 16 s at 100 members);
//   - each gossip message retransmitted 2·log10(N+1) times, not 4·: the
//     news of a join goes to every member about as surely (push-pull
//     repairs what gossip misses) for half the packets;
//   - a handoff queue of 4,096 messages instead of 1,024, so a burst is
//     queued, not dropped.
func fleetTiming(ml *memberlist.Config) {
	ml.ProbeInterval = 2 * time.Second
	ml.ProbeTimeout = 2 * time.Second
	ml.RetransmitMult = 2
	ml.HandoffQueueDepth = 4096
}
