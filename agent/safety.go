package agent

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strings"

	sockaddr "github.com/hashicorp/go-sockaddr"
	"google.golang.org/grpc/peer"

	"github.com/linerate/linerate/pktgen"
)

// The safety rails: a sender sends only to the data addresses and MACs of
// the receivers of its own cluster (or into --allow-dst), and never from
// the interface that carries the default route or the control traffic
// (unless --allow-mgmt-iface); nor does a receiver count on it or Tune
// pin its IRQs. rails.go has the rails on the rest of a request.

// ErrMgmtIface is the refusal of a data interface that carries the
// default route or the control traffic: Start's for a sender, every
// send's, Arm's and Tune's.
var ErrMgmtIface = errors.New("data interface is a management interface")

// linkLocal6 is IPv6's link-local prefix: never a test address.
var linkLocal6 = netip.MustParsePrefix("fe80::/10")

// maxListed bounds the receivers an error lists.
const maxListed = 8

// target is a receiver of the cluster: its data addresses and MAC
// (targets.go says where they come from).
type target struct {
	name string
	ips  []netip.Addr
	mac  net.HardwareAddr
}

func (t target) String() string {
	var ips []string
	for _, ip := range t.ips {
		ips = append(ips, ip.String())
	}
	mac := "no MAC"
	if t.mac != nil {
		mac = t.mac.String()
	}
	return fmt.Sprintf("%s %s at %s", t.name, strings.Join(ips, ","), mac)
}

// checkDestinations checks every thread's destination (checkDestination).
func checkDestinations(c *pktgen.Config, targets []target, allow []netip.Prefix, gossip bool) error {
	if len(c.ThreadDst) == 0 {
		return checkDestination(c, targets, allow, gossip)
	}
	for i := range c.ThreadDst {
		if err := checkDestination(c.ForThread(i), targets, allow, gossip); err != nil {
			return fmt.Errorf("thread %d: %w", i, err)
		}
	}
	return nil
}

// checkDestination allows c's destination range dst_min..dst_max when it
// lies inside one of the allowed prefixes, or when every address in it is
// a data address of a receiver in targets whose MAC is c's dst_mac.
// gossip tells whether the agent has a cluster at all (for the message).
func checkDestination(c *pktgen.Config, targets []target, allow []netip.Prefix, gossip bool) error {
	lo, hi := c.DstMin.Unmap().WithZone(""), c.DstMax.Unmap().WithZone("")
	if !hi.IsValid() {
		hi = lo
	}
	// Link-local is never a test destination (pktgen.CheckTestAddr),
	// whatever --allow-dst allows: at either end, or inside the range.
	for _, a := range []netip.Addr{lo, hi, linkLocal6.Addr()} {
		if a == linkLocal6.Addr() && (lo.Compare(a) > 0 || hi.Compare(a) < 0 || lo.Is4() != a.Is4()) {
			continue
		}
		if err := pktgen.CheckTestAddr(a); err != nil {
			return fmt.Errorf("destination %w, whatever --allow-dst allows", err)
		}
	}
	for _, p := range allow {
		if p.Contains(lo) && p.Contains(hi) {
			return nil
		}
	}
	flag := fmt.Sprintf("--allow-dst %s", cover(lo, hi))
	for a := lo; a.IsValid(); a = a.Next() {
		var holders []target
		for _, t := range targets {
			if slices.Contains(t.ips, a) {
				holders = append(holders, t)
			}
		}
		if len(holders) == 0 {
			return fmt.Errorf("destination %s is not a data address of a receiver in this agent's cluster (%s); "+
				"send to an address a receiver announces (its Describe's nic.data_ips), or start the sender agent with %s to allow it",
				a, allowed(targets, allow, gossip), flag)
		}
		if !slices.ContainsFunc(holders, func(t target) bool { return bytesEqualMAC(t.mac, c.DstMAC) }) {
			return fmt.Errorf("dst_mac %s is not the data MAC of the receiver holding %s (%s); "+
				"use that MAC (its Describe's nic.mac), or start the sender agent with %s to send there through another next hop",
				macString(c.DstMAC), a, listTargets(holders), flag)
		}
		if a == hi {
			return nil
		}
	}
	return nil
}

func bytesEqualMAC(a, b net.HardwareAddr) bool { return len(a) > 0 && bytes.Equal(a, b) }

// allowed says what a sender may send to, for an error.
func allowed(targets []target, allow []netip.Prefix, gossip bool) string {
	var parts []string
	switch {
	case !gossip:
		parts = append(parts, "the agent runs without gossip (no --bind), so it knows no receivers")
	case len(targets) == 0:
		parts = append(parts, "no alive receiver with data addresses in the cluster")
	default:
		parts = append(parts, "receivers: "+listTargets(targets))
	}
	if len(allow) == 0 {
		parts = append(parts, "no --allow-dst")
	} else {
		var ps []string
		for _, p := range allow {
			ps = append(ps, p.String())
		}
		parts = append(parts, "--allow-dst "+strings.Join(ps, ","))
	}
	return strings.Join(parts, "; ")
}

func listTargets(ts []target) string {
	var out []string
	for i, t := range ts {
		if i == maxListed {
			out = append(out, fmt.Sprintf("and %d more", len(ts)-maxListed))
			break
		}
		out = append(out, t.String())
	}
	return strings.Join(out, "; ")
}

// cover is the smallest prefix holding lo..hi (same family).
func cover(lo, hi netip.Addr) netip.Prefix {
	for bits := lo.BitLen(); bits >= 0; bits-- {
		p, err := lo.Prefix(bits)
		if err == nil && p.Contains(hi) {
			return p
		}
	}
	return netip.Prefix{}
}

// ctlAddr is an address the control traffic uses.
type ctlAddr struct {
	what string
	host string
}

// specificHost is a host part that names one address (not empty, not
// 0.0.0.0 or ::).
func specificHost(h string) bool {
	if h == "" {
		return false
	}
	ip := net.ParseIP(h)
	return ip == nil || !ip.IsUnspecified()
}

// controlAddrs are the addresses the coordinator and the cluster reach
// this agent on: the gRPC listen address (or, listening on every address,
// the announced one) and serf's bind and advertise addresses.
func (a *Agent) controlAddrs() []ctlAddr {
	var out []ctlAddr
	gossip := a.cfg.Bind != ""
	if h, _, err := net.SplitHostPort(a.cfg.GRPCAddr); err == nil && specificHost(h) {
		out = append(out, ctlAddr{"the gRPC address (--grpc)", h})
	} else if gossip {
		if h, err := a.announceHost(); err == nil {
			out = append(out, ctlAddr{"the announced gRPC address", h})
		}
	}
	if !gossip {
		return out
	}
	bh, _, _ := net.SplitHostPort(a.cfg.Bind)
	if specificHost(bh) {
		out = append(out, ctlAddr{"the gossip address (--bind)", bh})
	}
	if ah, _, err := net.SplitHostPort(a.cfg.Advertise); err == nil && specificHost(ah) {
		out = append(out, ctlAddr{"the gossip advertise address (--advertise)", ah})
	} else if !specificHost(bh) {
		if ip, err := sockaddr.GetPrivateIP(); err == nil && ip != "" {
			out = append(out, ctlAddr{"the gossip address serf advertises (the host's private address)", ip})
		}
	}
	return out
}

// resolve is host's addresses (a literal, or looked up).
func resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	if a, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{a.Unmap().WithZone("")}, nil
	}
	as, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	for i := range as {
		as[i] = as[i].Unmap().WithZone("")
	}
	return as, err
}

// mgmtUse is what the agent would do with its interface, for a refusal.
type mgmtUse struct{ risk, anyway string }

// What the management rail guards: sending (Start of a sender, Configure,
// Start), counting (Arm: XDP on the interface) and tuning (Tune: its
// queue IRQs pinned).
var (
	useSend = mgmtUse{"test traffic from it would compete with or cut off the control traffic", "send from it"}
	useArm  = mgmtUse{"a receiver counting on it (XDP attached, test packets dropped) could cut off the control traffic", "count on it"}
	useTune = mgmtUse{"pinning its queue IRQs to the test's CPUs would move the interrupts of the control traffic", "tune it"}
)

// mgmtRail refuses the agent's interface when it carries a default route
// or the control traffic, unless allow (--allow-mgmt-iface): checked at
// start and at every request that sends, counts or tunes, since routes
// and addresses change while the agent runs.
type mgmtRail struct {
	iface  string
	allow  bool
	netOS  netOS
	thread nsThread
	// ctl are the control addresses of the agent's configuration (nil:
	// none but the request's own).
	ctl func() []ctlAddr
}

// check refuses the interface for use, naming what it carries. A request
// in ctx adds the local address it came in on to the control addresses.
func (m *mgmtRail) check(ctx context.Context, use mgmtUse) error {
	if m.allow {
		return nil
	}
	iface := m.iface
	type resolved struct {
		ctlAddr
		ips []netip.Addr
	}
	var ctl []resolved
	if m.ctl != nil {
		for _, c := range m.ctl() {
			ips, err := resolve(ctx, c.host)
			if err != nil {
				return fmt.Errorf("agent: check that --iface %s carries no control traffic: resolve %s %s: %w (give an address, or --allow-mgmt-iface to skip the check)", iface, c.what, c.host, err)
			}
			ctl = append(ctl, resolved{c, ips})
		}
	}
	if local, ok := requestLocalAddr(ctx); ok {
		ctl = append(ctl, resolved{ctlAddr{"the address this request came in on", local.String()}, []netip.Addr{local}})
	}
	var found []string
	err := m.thread.do(func() error {
		routes, err := m.netOS.defaultRouteIfaces()
		if err != nil {
			return fmt.Errorf("read the default routes: %w", err)
		}
		if slices.Contains(routes, iface) {
			found = append(found, "the default route")
		}
		link, err := m.netOS.iface(iface)
		if err != nil {
			return fmt.Errorf("read the addresses of %s: %w", iface, err)
		}
		for _, c := range ctl {
			for _, ip := range c.ips {
				if slices.Contains(link.addrs, ip) {
					found = append(found, fmt.Sprintf("%s %s", c.what, ip))
					break
				}
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("agent: check that --iface %s carries no management traffic: %w (give --allow-mgmt-iface to skip the check)", iface, err)
	}
	if len(found) > 0 {
		return fmt.Errorf("agent: %w: --iface %s carries %s, and %s: "+
			"give a separate data interface, or --allow-mgmt-iface to %s anyway", ErrMgmtIface, iface, strings.Join(found, " and "), use.risk, use.anyway)
	}
	return nil
}

// requestLocalAddr is the local address of the gRPC connection a request
// in ctx came in on.
func requestLocalAddr(ctx context.Context) (netip.Addr, bool) {
	p, ok := peer.FromContext(ctx)
	if !ok || p.LocalAddr == nil {
		return netip.Addr{}, false
	}
	ap, err := netip.ParseAddrPort(p.LocalAddr.String())
	if err != nil {
		return netip.Addr{}, false
	}
	return ap.Addr().Unmap().WithZone(""), true
}

// checkRequest is the management rail at request op: a refusal is ErrRefused,
// a check that could not be made ErrHost.
func (m *mgmtRail) checkRequest(ctx context.Context, op string, use mgmtUse) error {
	err := m.check(ctx, use)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ErrMgmtIface):
		return failf(ErrRefused, "%s: %w", op, err)
	default:
		return failf(ErrHost, "%s: %w", op, err)
	}
}
