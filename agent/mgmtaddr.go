package agent

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"

	"github.com/linerate/linerate/internal/cluster/gossip"
)

// The management address: where gossip (--bind) and gRPC (--grpc) listen
// when their address names a port but no host (":7946", ":7443", the
// defaults), so that neither is reachable from the data network. It is,
// in this order:
//  1. --advertise's host, when it is an address: what the cluster is
//     told to reach this agent on;
//  2. the address this host sends from to its first --join seed that
//     has a route: the network the cluster lives on;
//  3. the preferred source address of the default route (IPv4 first),
//     else the first address of its interface that is not link-local.
//
// An explicit host (0.0.0.0 for every address) always wins.

// ErrNoMgmtAddr is Start's refusal of an agent that finds no management
// address.
var ErrNoMgmtAddr = errors.New("no management address")

// mgmtAddr finds the management address (rules above) and why it is
// that one.
func (a *Agent) mgmtAddr(ctx context.Context) (netip.Addr, string, error) {
	if h, _, err := net.SplitHostPort(a.cfg.Advertise); err == nil {
		if ip, err := netip.ParseAddr(h); err == nil && !ip.IsUnspecified() {
			return ip.Unmap().WithZone(""), "the --advertise address", nil
		}
	}
	// In the agent's own network namespace, where gossip and gRPC
	// listen (not on ThreadInit's thread, which is the data plane's).
	var errs []error
	for _, seed := range a.cfg.Join {
		src, err := a.cfg.netOS.sourceToward(ctx, seed)
		if err == nil {
			return src, "the source address toward the --join seed " + seed, nil
		}
		errs = append(errs, err)
	}
	src, err := a.cfg.netOS.defaultSource()
	if err == nil {
		return src, "the source address of the default route", nil
	}
	errs = append(errs, fmt.Errorf("the default route: %w", err))
	return netip.Addr{}, "", fmt.Errorf("%w: %v", ErrNoMgmtAddr, errors.Join(errs...))
}

// resolveListen puts the management address into the gossip and gRPC
// listen addresses that name no host.
func (a *Agent) resolveListen(ctx context.Context) error {
	var fill []*string
	var flags []string
	for _, p := range []struct {
		addr *string
		flag string
	}{{&a.cfg.Bind, "--bind"}, {&a.cfg.GRPCAddr, "--grpc"}} {
		if *p.addr == "" {
			continue // no gossip
		}
		h, _, err := net.SplitHostPort(*p.addr)
		if err != nil {
			return fmt.Errorf("agent: %s %q: %w (want HOST:PORT, or :PORT for the management address)", p.flag, *p.addr, err)
		}
		if h == "" {
			fill, flags = append(fill, p.addr), append(flags, p.flag)
		}
	}
	if len(fill) == 0 {
		return nil
	}
	ip, why, err := a.mgmtAddr(ctx)
	if err != nil {
		return fmt.Errorf("agent: %s without a host listen on the management address: %w; give HOST:PORT (0.0.0.0:PORT for every address)", strings.Join(flags, " and "), err)
	}
	for _, p := range fill {
		_, port, _ := net.SplitHostPort(*p)
		*p = net.JoinHostPort(ip.String(), port)
	}
	a.log.Info("listening on the management address", "addr", ip, "why", why, "for", flags)
	return nil
}

// sourceToward is gossip.SourceToward, in the calling thread's network
// namespace.
func (hostNetOS) sourceToward(ctx context.Context, hostport string) (netip.Addr, error) {
	return gossip.SourceToward(ctx, hostport)
}

// firstRoutable is the first of addrs of the family (v4) that is neither
// link-local nor loopback.
func firstRoutable(addrs []netip.Addr, v4 bool) (netip.Addr, bool) {
	for _, a := range addrs {
		if a.Is4() == v4 && !a.IsLinkLocalUnicast() && !a.IsLoopback() && !a.IsUnspecified() {
			return a, true
		}
	}
	return netip.Addr{}, false
}

// listenAddrs are the management addresses the agent listens on: the
// hosts of --bind (gossip), --grpc and --advertise that are addresses,
// once resolveListen filled them (an unspecified host, 0.0.0.0, names
// none).
func (c *Config) listenAddrs() []netip.Addr {
	var out []netip.Addr
	for _, hp := range []string{c.Bind, c.GRPCAddr, c.Advertise} {
		h, _, err := net.SplitHostPort(hp)
		if err != nil {
			continue
		}
		if ip, err := netip.ParseAddr(h); err == nil && !ip.IsUnspecified() {
			out = append(out, ip.Unmap().WithZone(""))
		}
	}
	return out
}
