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

	"github.com/linerate/linerate/internal/gossip"
)

// RoleCoordinator is the serf role tag of a coordinator; agents carry
// sender, receiver or both.
const RoleCoordinator = "coordinator"

// Member is one agent as serf announces it (its compact tags).
type Member struct {
	Name    string `json:"name"`
	Role    string `json:"role"`
	Status  string `json:"status"` // serf's: alive, leaving, left, failed
	Gossip  string `json:"gossip"` // address:port of its serf endpoint
	GRPC    string `json:"grpc"`   // the Agent service
	Iface   string `json:"iface"`
	NUMA    int    `json:"numa_node"`
	Queues  int    `json:"queues"`
	SpeedMb int64  `json:"link_speed_mbps"`
	Backend string `json:"backends"`
	Version string `json:"version"`
	Health  string `json:"health,omitempty"` // filled by Check: serving, or why not
}

// Sends and Receives tell what a member's role allows.
func (m Member) Sends() bool    { return m.Role == "sender" || m.Role == "both" }
func (m Member) Receives() bool { return m.Role == "receiver" || m.Role == "both" }

func memberOf(sm serf.Member) Member {
	atoi := func(s string) int { n, _ := strconv.Atoi(s); return n }
	speed, _ := strconv.ParseInt(sm.Tags["speed"], 10, 64)
	return Member{
		Name: sm.Name, Role: sm.Tags["role"], Status: sm.Status.String(),
		Gossip: net.JoinHostPort(sm.Addr.String(), strconv.Itoa(int(sm.Port))),
		GRPC:   sm.Tags["grpc"], Iface: sm.Tags["iface"], NUMA: atoi(sm.Tags["numa"]), Queues: atoi(sm.Tags["queues"]),
		SpeedMb: speed, Backend: sm.Tags["backend"], Version: sm.Tags["version"],
	}
}

// ClusterConfig joins the coordinator to the agents' serf cluster.
type ClusterConfig struct {
	Name      string   // node name (default: "coordinator-<pid>")
	Bind      string   // gossip address:port (default 0.0.0.0:0, any free port)
	Advertise string   // address:port agents reach it on (default: Bind's)
	Join      []string // members to join (host:port), at least one
	GossipKey []byte   // the cluster's keyring key (16, 24 or 32 bytes), or none
	Logger    hclog.Logger
}

// Event is a membership change of an agent.
type Event struct {
	Member Member
	Type   string // serf's event name: member-join, member-leave, member-failed, member-update, member-reap
}

// Cluster is the coordinator's view of the serf cluster: it is a member
// (role coordinator) so it learns of joins, leaves and failures as they
// happen.
type Cluster struct {
	serf *gossip.Member
	log  hclog.Logger
	join []string

	mu   sync.Mutex
	subs map[chan Event]struct{}
	done chan struct{}
}

// JoinCluster starts a serf member and joins it to cfg.Join.
func JoinCluster(cfg ClusterConfig) (*Cluster, error) {
	if len(cfg.Join) == 0 {
		return nil, fmt.Errorf("join the cluster: no member to join (give --join HOST:PORT of an agent's gossip address)")
	}
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	if cfg.Name == "" {
		cfg.Name = fmt.Sprintf("coordinator-%d-%d", os.Getpid(), time.Now().UnixNano()%100000)
	}
	if cfg.Bind == "" {
		cfg.Bind = "0.0.0.0:0"
	}
	events := make(chan serf.Event, 1024)
	s, err := gossip.Start(gossip.Config{Name: cfg.Name, Tags: map[string]string{"role": RoleCoordinator},
		Bind: cfg.Bind, Advertise: cfg.Advertise, Key: cfg.GossipKey, Events: events, Logger: cfg.Logger})
	if err != nil {
		return nil, err
	}
	c := &Cluster{serf: s, log: cfg.Logger, join: cfg.Join, subs: map[chan Event]struct{}{}, done: make(chan struct{})}
	go c.loop(events)
	n, err := s.Join(cfg.Join, true)
	if n == 0 {
		_ = c.Close()
		if err == nil {
			err = fmt.Errorf("no member answered")
		}
		return nil, fmt.Errorf("join the cluster at %s: %w (is an agent gossiping there, with the same --gossip-key?)", strings.Join(cfg.Join, ", "), err)
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
				if sm.Tags["role"] == RoleCoordinator {
					continue
				}
				ev := Event{Member: memberOf(sm), Type: me.Type.String()}
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
		if sm.Tags["role"] == RoleCoordinator {
			continue
		}
		out = append(out, memberOf(sm))
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

// WaitAlive waits until at least n agents are alive, refreshing the
// member list twice a second, and returns them.
func (c *Cluster) WaitAlive(ctx context.Context, n int, timeout time.Duration) ([]Member, error) {
	deadline := time.Now().Add(timeout)
	refresh := time.Now().Add(500 * time.Millisecond)
	for {
		ms := c.Members()
		alive := 0
		for _, m := range ms {
			if m.Status == "alive" {
				alive++
			}
		}
		if alive >= n {
			return ms, nil
		}
		if time.Now().After(deadline) {
			return ms, fmt.Errorf("%d of %d agents alive after %s", alive, n, timeout)
		}
		if time.Now().After(refresh) {
			c.Refresh()
			refresh = time.Now().Add(500 * time.Millisecond)
		}
		select {
		case <-ctx.Done():
			return ms, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Close leaves the cluster gracefully and stops gossip.
func (c *Cluster) Close() error {
	err := c.serf.Stop()
	<-c.done
	return err
}
