package coordinator

import (
	"context"
	"fmt"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/serf/serf"

	"github.com/linerate/linerate/internal/cluster/gossip"
	"github.com/linerate/linerate/internal/ctxsleep"
)

// Member is one agent as serf announces it: its name, the tags it
// announced (gossip.Tags, data addresses included) and serf's view of
// it. Its JSON is `linerate members --json` (memberjson.go).
type Member struct {
	Name string
	gossip.Tags
	Status string // serf's: alive, leaving, left, failed
	Gossip string // address:port of its serf endpoint
	Health string // filled by Check: serving, or why not
}

// Sends tells whether the member's role runs senders.
func (m Member) Sends() bool { return m.Role.Sends() }

// Receives tells whether the member's role runs a receiver.
func (m Member) Receives() bool { return m.Role.Receives() }

func memberOf(sm serf.Member) Member {
	return Member{
		Name: sm.Name, Tags: gossip.DecodeTags(sm.Tags), Status: sm.Status.String(),
		Gossip: net.JoinHostPort(sm.Addr.String(), strconv.Itoa(int(sm.Port))),
	}
}

// ClusterConfig joins the coordinator to the agents' serf cluster.
type ClusterConfig struct {
	Name      string   // node name (default: "coordinator-<pid>")
	Bind      string   // gossip address:port (default ":0"; no host: Advertise's, else the source address toward the first Join seed with a route)
	Advertise string   // address:port agents reach it on (default: Bind's)
	Join      []string // members to join (host:port), at least one
	// JoinTimeout is how long the join keeps trying Join when no member
	// answers (agents not up yet, or overloaded); default
	// DefaultJoinTimeout.
	JoinTimeout time.Duration
	GossipKey   []byte // the cluster's keyring key (16, 24 or 32 bytes); required unless InsecureGossip
	// InsecureGossip gossips in plaintext, without a key (logged as a
	// warning at every start).
	InsecureGossip bool
	Logger         hclog.Logger
	// Tune adjusts serf's configuration before it starts (tests: shorter
	// timers), as gossip.Config.Tune.
	Tune func(*serf.Config)
}

// Event is a membership change of an agent.
type Event struct {
	Member Member
	Type   gossip.MemberEvent
}

// Cluster is the coordinator's view of the serf cluster: it is a member
// (role gossip.RoleCoordinator) so it learns of joins, leaves and failures as they
// happen.
type Cluster struct {
	serf *gossip.Member
	log  hclog.Logger
	join []string

	mu     sync.Mutex
	subs   map[chan Event]struct{}
	closed bool // set by Close: no refresh starts after it
	done   chan struct{}
	// refreshes are WaitAlive's background refreshes; Close waits for
	// them.
	refreshes sync.WaitGroup
}

// JoinCluster starts a serf member and joins it to cfg.Join, retrying
// with backoff (join.go) until a member answers, cfg.JoinTimeout has
// passed or ctx ends.
func JoinCluster(ctx context.Context, cfg ClusterConfig) (*Cluster, error) {
	if len(cfg.Join) == 0 {
		return nil, fmt.Errorf("join the cluster: no member to join (give --join HOST:PORT of an agent's gossip address)")
	}
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	if len(cfg.GossipKey) == 0 {
		if !cfg.InsecureGossip {
			return nil, fmt.Errorf("join the cluster: %w", gossip.NoKeyError(""))
		}
		cfg.Logger.Warn(gossip.InsecureWarning)
	}
	if cfg.Name == "" {
		cfg.Name = fmt.Sprintf("coordinator-%d-%d", os.Getpid(), time.Now().UnixNano()%100000)
	}
	if cfg.Bind == "" {
		cfg.Bind = ":0"
	}
	bind, err := bindHost(cfg)
	if err != nil {
		return nil, fmt.Errorf("join the cluster: %w", err)
	}
	cfg.Bind = bind
	tags, err := gossip.CoordinatorTags().Encode()
	if err != nil {
		return nil, fmt.Errorf("join the cluster: %w", err)
	}
	events := make(chan serf.Event, 1024)
	s, err := gossip.Start(gossip.Config{Name: cfg.Name, Tags: tags,
		Bind: cfg.Bind, Advertise: cfg.Advertise, Key: cfg.GossipKey, Events: events, Logger: cfg.Logger, Tune: cfg.Tune})
	if err != nil {
		return nil, err
	}
	c := &Cluster{serf: s, log: cfg.Logger, join: cfg.Join, subs: map[chan Event]struct{}{}, done: make(chan struct{})}
	go c.loop(events)
	n, err := newJoinRetry(cfg).join(ctx, s, cfg.Join)
	if err != nil {
		_ = c.Close()
		return nil, err
	}
	c.log.Debug("joined the cluster", "contacted", n, "members", s.NumNodes())
	return c, nil
}

func (c *Cluster) loop(events chan serf.Event) {
	defer close(c.done)
	for {
		select {
		case e := <-events:
			me, ok := e.(serf.MemberEvent)
			if !ok {
				continue
			}
			for _, sm := range me.Members {
				m := memberOf(sm)
				if m.Role == gossip.RoleCoordinator {
					continue
				}
				ev := Event{Member: m, Type: gossip.MemberEvent(me.Type.String())}
				c.log.Debug("member event", "event", ev.Type, "member", sm.Name)
				c.mu.Lock()
				for ch := range c.subs {
					select {
					case ch <- ev:
					default: // a slow subscriber misses events, never stalls serf
					}
				}
				c.mu.Unlock()
			}
		case <-c.serf.ShutdownCh():
			return
		}
	}
}

// Subscribe delivers membership events until cancel is called.
func (c *Cluster) Subscribe() (events <-chan Event, cancel func()) {
	ch := make(chan Event, 256)
	c.mu.Lock()
	c.subs[ch] = struct{}{}
	c.mu.Unlock()
	return ch, func() {
		c.mu.Lock()
		delete(c.subs, ch)
		c.mu.Unlock()
	}
}

// Members are the agents serf knows (coordinators left out), sorted by
// name.
func (c *Cluster) Members() []Member {
	var out []Member
	for _, sm := range c.serf.Members() {
		if m := memberOf(sm); m.Role != gossip.RoleCoordinator {
			out = append(out, m)
		}
	}
	slices.SortFunc(out, func(a, b Member) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Refresh exchanges the full member state with the members it joined
// (serf's push-pull): news of many agents that joined a moment ago
// arrives at once instead of by gossip, a few per round.
func (c *Cluster) Refresh() {
	if _, err := c.serf.Join(c.join, true); err != nil {
		c.log.Debug("refresh the member list", "error", err)
	}
}

// WaitAlive waits until at least n agents are alive (waitFor) and
// returns them.
func (c *Cluster) WaitAlive(ctx context.Context, n int, timeout time.Duration) ([]Member, error) {
	return c.waitFor(ctx, timeout, func(ms []Member) string {
		alive := 0
		for _, m := range ms {
			if m.Status == "alive" {
				alive++
			}
		}
		if alive >= n {
			return ""
		}
		return fmt.Sprintf("%d of %d agents alive", alive, n)
	})
}

// WaitNamed waits until every agent named is alive (waitFor): a run's
// agents, started with or after the coordinator, may join a moment after
// its seed answered. At the deadline it returns the members and what it
// waited for, and the run's discovery names who is missing.
func (c *Cluster) WaitNamed(ctx context.Context, names []string, timeout time.Duration) ([]Member, error) {
	return c.waitFor(ctx, timeout, func(ms []Member) string {
		alive := map[string]bool{}
		for _, m := range ms {
			alive[m.Name] = m.Status == "alive"
		}
		var missing []string
		for _, n := range names {
			if !alive[n] && !slices.Contains(missing, n) {
				missing = append(missing, n)
			}
		}
		if len(missing) == 0 {
			return ""
		}
		return "not alive: " + strings.Join(missing, ", ")
	})
}

// waitFor waits until short says nothing is missing of the members,
// reading them ten times a second and refreshing the member list (one
// refresh at a time, each half a second after the last ended), and
// returns them; it returns at its deadline whatever a refresh under way
// is waiting for, with short's last word.
func (c *Cluster) waitFor(ctx context.Context, timeout time.Duration, short func([]Member) string) ([]Member, error) {
	deadline := time.Now().Add(timeout)
	refresh := time.Now().Add(500 * time.Millisecond)
	var refreshing chan struct{} // closed when the refresh under way ends
	for {
		ms := c.Members()
		missing := short(ms)
		if missing == "" {
			return ms, nil
		}
		if time.Now().After(deadline) {
			return ms, fmt.Errorf("%s after %s", missing, timeout)
		}
		if time.Now().After(refresh) && refreshing == nil {
			// In the background: a push-pull with an overloaded seed can
			// take memberlist's TCP timeout (10 s) per seed, and the wait
			// must end at its deadline.
			refreshing = make(chan struct{})
			if !c.refreshInBackground(refreshing) {
				return ms, fmt.Errorf("%s: the cluster was closed", missing)
			}
		}
		select {
		case <-refreshing:
			refreshing, refresh = nil, time.Now().Add(500*time.Millisecond)
		default:
		}
		// A thousand members are decoded each time: not faster.
		if err := ctxsleep.Sleep(ctx, 100*time.Millisecond); err != nil {
			return ms, err
		}
	}
}

// refreshInBackground starts a Refresh that closes done when it ends,
// unless the cluster is closed (false).
func (c *Cluster) refreshInBackground(done chan struct{}) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return false
	}
	c.refreshes.Add(1)
	go func() {
		defer c.refreshes.Done()
		defer close(done)
		c.Refresh()
	}()
	return true
}

// Close leaves the cluster gracefully and stops gossip. It returns once
// a refresh WaitAlive left under way has ended too: with a seed that
// accepts and never answers, after memberlist's TCP timeout (10 s).
func (c *Cluster) Close() error {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	err := c.serf.Stop()
	c.refreshes.Wait()
	<-c.done
	return err
}
