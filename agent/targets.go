package agent

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/serf/serf"
	"google.golang.org/grpc"
	"google.golang.org/grpc/peer"

	"github.com/linerate/linerate/internal/cluster/gossip"
	"github.com/linerate/linerate/internal/cluster/mtls"
	"github.com/linerate/linerate/pktgen"
	lineratev1 "github.com/linerate/linerate/proto/linerate/v1"
)

// Where a sender's destinations come from. Gossip tags say which members
// claim to be receivers holding an address, but anyone who can gossip can
// claim anything; so a member is a destination only once its own Agent
// service, dialled over mutual TLS with this agent's certificate, proves
// it holds a certificate of the member's name (role agent) and its
// Describe names the data addresses and MAC. Answers are kept for
// targetTTL, refusals for targetRetry. An agent run with --insecure has no
// certificate to prove anything with: it trusts the tags, and says so at
// start.
const (
	targetTTL       = 30 * time.Second
	targetRetry     = time.Second
	describeTimeout = 3 * time.Second
	// describeParallel bounds the receivers asked at once.
	describeParallel = 16
)

// describer asks the member name at its gRPC address addr to describe
// itself, and fails unless the answer comes from a certificate of that
// name.
type describer func(ctx context.Context, name, addr string) (*lineratev1.DescribeResponse, error)

// mtlsDescriber dials over mutual TLS with the agent's own certificate
// (dir, certName; allowCAKey: dir may hold ca.key, as the agent serves
// from it with --allow-ca-key), expecting the server's certificate to
// name the member (its SAN, verified in the handshake, and its common
// name) with role agent.
func mtlsDescriber(dir, certName string, allowCAKey bool) describer {
	return func(ctx context.Context, name, addr string) (*lineratev1.DescribeResponse, error) {
		if addr == "" {
			return nil, fmt.Errorf("announces no gRPC address (tag grpc)")
		}
		creds, err := mtls.ClientCredentials(mtls.Options{Dir: dir, Name: certName, ServerName: name, PeerRoles: []mtls.Role{mtls.RoleAgent}, AllowCAKey: allowCAKey})
		if err != nil {
			return nil, fmt.Errorf("credentials to ask it: %w", err)
		}
		conn, err := grpc.NewClient(addr, mtls.DialOptions(creds)...)
		if err != nil {
			return nil, fmt.Errorf("dial %s: %w", addr, err)
		}
		defer conn.Close()
		ctx, cancel := context.WithTimeout(ctx, describeTimeout)
		defer cancel()
		var p peer.Peer
		d, err := lineratev1.NewAgentClient(conn).Describe(ctx, &lineratev1.DescribeRequest{}, grpc.Peer(&p))
		if err != nil {
			return nil, fmt.Errorf("Describe at %s over mutual TLS: %w", addr, err)
		}
		who, err := mtls.PeerFromContext(peer.NewContext(ctx, &p))
		switch {
		case err != nil:
			return nil, fmt.Errorf("Describe at %s: %w", addr, err)
		case who.Name != name:
			return nil, fmt.Errorf("the certificate at %s names %q, not the member", addr, who.Name)
		case who.Role != mtls.RoleAgent:
			return nil, fmt.Errorf("the certificate at %s is a %s's, not an agent's", addr, who.Role)
		}
		return d, nil
	}
}

// targetBook finds the receivers a send's destinations belong to.
type targetBook struct {
	members func() []serf.Member
	// describe is nil when the agent has no certificate (--insecure):
	// the tags are then taken as they are.
	describe describer
	log      hclog.Logger
	now      func() time.Time

	mu   sync.Mutex
	seen map[string]verdict // by member name
}

// verdict is what a member's Describe said, for the tags it was asked
// under.
type verdict struct {
	tags string // the grpc, ips and mac tags asked under: new tags, new question
	t    target
	err  error
	at   time.Time
}

// targetDescriber asks receivers with the agent's certificate; nil with
// --insecure (no certificate).
func targetDescriber(cfg *Config) describer {
	if cfg.Insecure {
		return nil
	}
	return mtlsDescriber(cfg.TLSDir, cfg.TLSName, cfg.AllowCAKey)
}

func newTargetBook(members func() []serf.Member, describe describer, log hclog.Logger) *targetBook {
	return &targetBook{members: members, describe: describe, log: log, now: time.Now, seen: map[string]verdict{}}
}

// targetsOf are the alive receiver (and both) members with data tags, as
// the tags announce them.
func targetsOf(ms []serf.Member) []target {
	var out []target
	for _, m := range ms {
		t := gossip.DecodeTags(m.Tags)
		if m.Status != serf.StatusAlive || !t.Role.Receives() || len(t.DataIPs) == 0 {
			continue
		}
		out = append(out, target{name: m.Name, ips: t.DataIPs, mac: t.DataMAC})
	}
	return out
}

// targets are the receivers that may take c's destinations: the alive
// receiving members whose tags claim one of c's destination addresses,
// each as its own authenticated Describe tells it (see above). refused
// says which members claimed an address and why they are no
// destination ("" when none).
func (b *targetBook) targets(ctx context.Context, c *pktgen.Config) (ts []target, refused string) {
	all := b.members()
	ms := map[string]serf.Member{}
	for _, m := range all {
		ms[m.Name] = m
	}
	var claims []target
	for _, t := range targetsOf(all) {
		if slices.ContainsFunc(t.ips, func(a netip.Addr) bool { return destinedTo(c, a) }) {
			claims = append(claims, t)
		}
	}
	if b.describe == nil {
		if len(claims) > 0 {
			b.log.Warn("destinations checked against the receivers' gossip tags alone: the agent has no certificate (--insecure) to ask them over mutual TLS", "receivers", listTargets(claims))
		}
		return claims, ""
	}
	verdicts := make([]verdict, len(claims))
	var wg sync.WaitGroup
	sem := make(chan struct{}, describeParallel)
	for i, cl := range claims {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			verdicts[i] = b.verdict(ctx, ms[cl.name])
		}()
	}
	wg.Wait()
	var why []string
	for i, v := range verdicts {
		if v.err != nil {
			why = append(why, fmt.Sprintf("%s (%v)", claims[i].name, v.err))
			continue
		}
		ts = append(ts, v.t)
	}
	if len(why) > 0 {
		refused = "members that announce a destination address but are refused as destinations: " + strings.Join(why, "; ")
	}
	return ts, refused
}

// verdict is m's verdict from the book, or asked anew when the book has
// none for m's present tags or it is too old.
func (b *targetBook) verdict(ctx context.Context, m serf.Member) verdict {
	tags := gossip.DecodeTags(m.Tags)
	key := fmt.Sprintf("%s %v %s", tags.GRPC, tags.DataIPs, tags.DataMAC)
	now := b.now()
	b.mu.Lock()
	v, ok := b.seen[m.Name]
	b.mu.Unlock()
	if ok && v.tags == key && (v.err == nil && now.Sub(v.at) < targetTTL || v.err != nil && now.Sub(v.at) < targetRetry) {
		return v
	}
	v = verdict{tags: key, at: now}
	d, err := b.describe(ctx, m.Name, tags.GRPC)
	if err == nil {
		v.t, err = describedTarget(m.Name, d)
	}
	if err != nil {
		v.err = err
		b.log.Warn("a member announcing a receiver's addresses is refused as a destination", "member", m.Name, "tags", m.Tags, "error", err)
	}
	b.mu.Lock()
	b.seen[m.Name] = v
	for name, old := range b.seen { // forget members long gone
		if now.Sub(old.at) > targetTTL {
			delete(b.seen, name)
		}
	}
	b.mu.Unlock()
	return v
}

// destinedTo tells whether a is one of c's destination addresses (any
// thread's range dst_min..dst_max).
func destinedTo(c *pktgen.Config, a netip.Addr) bool {
	in := func(c *pktgen.Config) bool {
		lo, hi := c.DstMin.Unmap().WithZone(""), c.DstMax.Unmap().WithZone("")
		if !hi.IsValid() {
			hi = lo
		}
		return lo.IsValid() && a.Is4() == lo.Is4() && lo.Compare(a) <= 0 && a.Compare(hi) <= 0
	}
	if len(c.ThreadDst) == 0 {
		return in(c)
	}
	for i := range c.ThreadDst {
		if in(c.ForThread(i)) {
			return true
		}
	}
	return false
}
