package agent

import (
	"errors"
	"fmt"
	"net"
	"strconv"

	sockaddr "github.com/hashicorp/go-sockaddr"
	"github.com/hashicorp/serf/serf"

	"github.com/linerate/linerate/internal/cluster/gossip"
	"github.com/linerate/linerate/internal/enum"
)

// tags encodes the compact serf tags the agent announces (gossip.Tags);
// details come over Describe.
func (a *Agent) tags(grpcAddr net.Addr) (map[string]string, error) {
	addr := grpcAddr.String()
	if tcp, ok := grpcAddr.(*net.TCPAddr); ok && tcp.IP.IsUnspecified() {
		host, err := a.announceHost()
		if err != nil {
			return nil, fmt.Errorf("gRPC listens on %s: no address to announce (give --advertise or a gRPC host): %v", addr, err)
		}
		addr = net.JoinHostPort(host, strconv.Itoa(tcp.Port))
	}
	nic := a.svc.inv.facts()
	t := gossip.Tags{
		Role: a.cfg.Role, GRPC: addr, Iface: a.cfg.Iface, NUMA: nic.numa, Queues: nic.queues, SpeedMbps: nic.speed,
		Backends: enum.Strings(a.svc.inv.backends()), Version: a.cfg.Version,
	}
	if a.cfg.Role.Receives() {
		// What a sender checks its destination against (targetsOf).
		link, err := a.svc.inv.link(a.cfg.Iface)
		if err != nil {
			a.log.Warn("no data address or MAC to announce: senders will refuse this receiver", "iface", a.cfg.Iface, "error", err)
		}
		t.DataIPs, t.DataMAC = link.addrs, link.mac
	}
	return t.Encode()
}

// announceHost is the host others reach this agent on when it listens on
// every address: the gossip advertise or bind host, else the private
// address memberlist would advertise.
func (a *Agent) announceHost() (string, error) {
	for _, hp := range []string{a.cfg.Advertise, a.cfg.Bind} {
		if h, _, err := net.SplitHostPort(hp); err == nil && h != "" && !net.ParseIP(h).IsUnspecified() {
			return h, nil
		}
	}
	ip, err := sockaddr.GetPrivateIP()
	if err == nil && ip == "" {
		err = errors.New("no private address on this host")
	}
	return ip, err
}

// bindGossip starts the agent's serf member, announcing the Agent
// service at grpcAddr, and binds its gossip port; it joins nobody yet
// (joinSeeds).
func (a *Agent) bindGossip(grpcAddr net.Addr) error {
	tags, err := a.tags(grpcAddr)
	if err != nil {
		return fmt.Errorf("agent: %w", err)
	}
	if len(a.cfg.GossipKey) == 0 {
		a.log.Warn(gossip.InsecureWarning)
	}
	events := make(chan serf.Event, 256)
	s, err := gossip.Start(gossip.Config{Name: a.cfg.Name, Tags: tags, Bind: a.cfg.Bind, Advertise: a.cfg.Advertise,
		Key: a.cfg.GossipKey, Events: events, Logger: a.log, Tune: a.cfg.serfHook})
	if err != nil {
		return fmt.Errorf("agent: %w", err)
	}
	a.mu.Lock()
	a.serf, a.events = s, events
	a.mu.Unlock()
	go a.eventLoop(s, events)
	a.log.Info("gossip started", "node", a.cfg.Name, "addr", s.Addr(), "encrypted", len(a.cfg.GossipKey) > 0, "tags", tags)
	return nil
}

// joinSeeds joins the seeds of --join (join.go), once the agent serves:
// a member that others learn of can be called at once.
func (a *Agent) joinSeeds() {
	a.mu.Lock()
	s, ctx := a.serf, a.joinCtx
	a.mu.Unlock()
	if s != nil {
		a.join(ctx, s)
	}
}

// eventLoop drains serf's events (a full channel would stall serf) and
// logs membership changes.
func (a *Agent) eventLoop(s *gossip.Member, events chan serf.Event) {
	for {
		select {
		case e := <-events:
			if me, ok := e.(serf.MemberEvent); ok {
				for _, m := range me.Members {
					a.log.Debug("member event", "event", me.Type.String(), "member", m.Name, "role", gossip.DecodeTags(m.Tags).Role)
				}
			}
		case <-s.ShutdownCh():
			return
		}
	}
}
