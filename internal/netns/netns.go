//go:build linux

package netns

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// Bench is the IPv4 benchmarking range lab addresses come from (RFC
// 2544); Bench6 the IPv6 one (RFC 5180).
var (
	Bench  = netip.MustParsePrefix("198.18.0.0/15")
	Bench6 = netip.MustParsePrefix("2001:2::/48")
)

// inBench tells whether a lies in one of the benchmarking ranges.
func inBench(a netip.Addr) bool { return Bench.Contains(a) || Bench6.Contains(a) }

// NS is a named network namespace (/run/netns/<Name>).
type NS struct {
	Name   string
	handle netns.NsHandle
	host   bool // the caller's own namespace: Close never deletes it
}

// Host is the namespace the process runs in, as an NS, so that a veth
// can have one end there (a lab's management link). Close only releases
// the handle.
func Host() (*NS, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	h, err := netns.Get()
	if err != nil {
		return nil, fmt.Errorf("netns: open the current namespace: %w", err)
	}
	return &NS{Name: "(host)", handle: h, host: true}, nil
}

// New creates the named namespace with its loopback up. The name must
// start with "lr-" so that whatever linerate makes can be found and
// removed.
func New(name string) (*NS, error) {
	if !strings.HasPrefix(name, "lr-") || len(name) > 64 || strings.ContainsAny(name, "/ ") {
		return nil, fmt.Errorf("netns %q: names start with \"lr-\", no '/' or spaces", name)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	orig, err := netns.Get()
	if err != nil {
		return nil, fmt.Errorf("netns %s: read current namespace: %w", name, err)
	}
	defer orig.Close()
	h, err := netns.NewNamed(name) // moves this thread into it
	if err != nil {
		return nil, fmt.Errorf("netns %s: create: %w", name, err)
	}
	if err := netns.Set(orig); err != nil {
		// The thread is stuck in the new namespace: never unlock it.
		runtime.LockOSThread()
		return nil, fmt.Errorf("netns %s: return to the original namespace: %w", name, err)
	}
	ns := &NS{Name: name, handle: h}
	if err := ns.Do(func() error {
		lo, err := netlink.LinkByName("lo")
		if err != nil {
			return err
		}
		return netlink.LinkSetUp(lo)
	}); err != nil {
		ns.Close()
		return nil, fmt.Errorf("netns %s: bring lo up: %w", name, err)
	}
	return ns, nil
}

// Close deletes the namespace (links in it go with it).
func (n *NS) Close() error {
	if n == nil || n.handle == -1 {
		return nil
	}
	n.handle.Close()
	n.handle = -1
	if n.host {
		return nil
	}
	if err := netns.DeleteNamed(n.Name); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("netns %s: delete: %w", n.Name, err)
	}
	return nil
}

// Do runs fn on an OS thread inside the namespace. Sockets fn opens stay
// bound to the namespace after it returns; goroutines fn starts do not
// inherit it.
func (n *NS) Do(fn func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		orig, err := netns.Get()
		if err != nil {
			runtime.UnlockOSThread()
			errc <- err
			return
		}
		defer orig.Close()
		if err := netns.Set(n.handle); err != nil {
			runtime.UnlockOSThread()
			errc <- fmt.Errorf("enter netns %s: %w", n.Name, err)
			return
		}
		ferr := fn()
		if err := netns.Set(orig); err != nil {
			// Leave the thread locked: the runtime discards it.
			errc <- errors.Join(ferr, fmt.Errorf("leave netns %s: %w", n.Name, err))
			return
		}
		runtime.UnlockOSThread()
		errc <- ferr
	}()
	return <-errc
}

// Command runs a program inside the namespace (as `ip netns exec` does).
func (n *NS) Command(ctx context.Context, name string, args ...string) *exec.Cmd {
	return exec.CommandContext(ctx, "ip", append([]string{"netns", "exec", n.Name, name}, args...)...)
}

// Link is one end of a veth pair.
type Link struct {
	NS    *NS
	Name  string
	Index int
	MAC   net.HardwareAddr
	Addr  netip.Prefix // zero when no address was asked for
	Addr6 netip.Prefix // the IPv6 address (in Bench6); zero when none was asked for
}

// VethOptions shape a veth pair.
type VethOptions struct {
	Queues int // rx and tx queues per end (default 1)
	// AddrA, AddrB are given to the ends (must lie in 198.18.0.0/15); a
	// zero prefix leaves that end without an address. Addr6A, Addr6B are
	// their IPv6 addresses (in 2001:2::/48), added without duplicate
	// address detection.
	AddrA, AddrB   netip.Prefix
	Addr6A, Addr6B netip.Prefix
	MTU            int
}

// Veth creates a veth pair aName in a and bName in b, both up.
func Veth(a *NS, aName string, b *NS, bName string, o VethOptions) (*Link, *Link, error) {
	for _, p := range []netip.Prefix{o.AddrA, o.AddrB, o.Addr6A, o.Addr6B} {
		if p.IsValid() && !inBench(p.Addr()) {
			return nil, nil, fmt.Errorf("veth %s-%s: address %s is outside %s and %s, the only ranges lab traffic may use", aName, bName, p, Bench, Bench6)
		}
	}
	for _, p := range []netip.Prefix{o.Addr6A, o.Addr6B} {
		if p.IsValid() && !p.Addr().Is6() {
			return nil, nil, fmt.Errorf("veth %s-%s: IPv6 address %s is not IPv6", aName, bName, p)
		}
	}
	q := max(o.Queues, 1)
	err := a.Do(func() error {
		la := netlink.NewLinkAttrs()
		la.Name, la.NumTxQueues, la.NumRxQueues = aName, q, q
		if o.MTU > 0 {
			la.MTU = o.MTU
		}
		v := &netlink.Veth{LinkAttrs: la, PeerName: bName, PeerNamespace: netlink.NsFd(b.handle), PeerNumTxQueues: uint32(q), PeerNumRxQueues: uint32(q)}
		if o.MTU > 0 {
			v.PeerMTU = uint32(o.MTU)
		}
		return netlink.LinkAdd(v)
	})
	if err != nil {
		return nil, nil, fmt.Errorf("veth %s (%s) - %s (%s): create: %w", aName, a.Name, bName, b.Name, err)
	}
	la, err := setup(a, aName, o.AddrA, o.Addr6A)
	if err != nil {
		return nil, nil, err
	}
	lb, err := setup(b, bName, o.AddrB, o.Addr6B)
	if err != nil {
		return nil, nil, err
	}
	for _, l := range []*Link{la, lb} {
		if err := l.WaitUp(2 * time.Second); err != nil {
			return nil, nil, err
		}
	}
	return la, lb, nil
}

// WaitUp waits until the link reports carrier (operstate up): frames sent
// before that are dropped, and pktgen refuses a device without carrier.
func (l *Link) WaitUp(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		var state netlink.LinkOperState
		err := l.NS.Do(func() error {
			link, err := netlink.LinkByName(l.Name)
			if err == nil {
				state = link.Attrs().OperState
			}
			return err
		})
		if err != nil {
			return fmt.Errorf("wait for %s in %s: %w", l.Name, l.NS.Name, err)
		}
		if state == netlink.OperUp {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("wait for %s in %s: still %s after %s", l.Name, l.NS.Name, state, timeout)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func setup(ns *NS, name string, addr, addr6 netip.Prefix) (*Link, error) {
	l := &Link{NS: ns, Name: name, Addr: addr, Addr6: addr6}
	err := ns.Do(func() error {
		if err := QuietIPv6(name); err != nil {
			return err
		}
		link, err := netlink.LinkByName(name)
		if err != nil {
			return err
		}
		for _, p := range []netip.Prefix{addr, addr6} {
			if !p.IsValid() {
				continue
			}
			a := &netlink.Addr{IPNet: &net.IPNet{IP: p.Addr().AsSlice(), Mask: net.CIDRMask(p.Bits(), p.Addr().BitLen())}}
			if p.Addr().Is6() {
				a.Flags = unix.IFA_F_NODAD
			}
			if err := netlink.AddrAdd(link, a); err != nil {
				return fmt.Errorf("add address %s: %w", p, err)
			}
		}
		if err := netlink.LinkSetUp(link); err != nil {
			return err
		}
		l.Index, l.MAC = link.Attrs().Index, link.Attrs().HardwareAddr
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("set up %s in %s: %w", name, ns.Name, err)
	}
	return l, nil
}

// quietIPv6 are the per-interface IPv6 settings QuietIPv6 writes: no
// link-local address of its own (addr_gen_mode 1: none), no duplicate
// address detection, no router solicitations and no router
// advertisements taken (nor addresses from them).
var quietIPv6 = []struct{ key, value string }{
	{"addr_gen_mode", "1"}, {"accept_dad", "0"}, {"dad_transmits", "0"},
	{"router_solicitations", "0"}, {"accept_ra", "0"}, {"autoconf", "0"},
}

// QuietIPv6 keeps interface name (in the calling thread's namespace,
// down: a link-local address is made when it comes up) from sending
// anything of its own IPv6 stack: no link-local address, hence no
// duplicate address detection, router solicitation or MLD report for
// it; the addresses it is given carry no DAD either. IPv6 stays on: the
// lab's hosts send and receive IPv6 test traffic (2001:2::/48), whose
// every frame the switch counts. Only the reports of the solicited-node
// groups of the addresses given are left, sent when the link comes up,
// before any run. A kernel without IPv6 has nothing to quiet.
func QuietIPv6(name string) error {
	dir := "/proc/sys/net/ipv6/conf/" + name + "/"
	if _, err := os.Stat(dir); os.IsNotExist(err) {
		return nil
	}
	for _, s := range quietIPv6 {
		if err := os.WriteFile(dir+s.key, []byte(s.value+"\n"), 0o644); err != nil {
			return fmt.Errorf("quiet IPv6 on %s: %w", name, err)
		}
	}
	return nil
}

// Neigh adds a permanent neighbour entry on l for ip → mac, so that no
// ARP is needed (and none is sent) before traffic.
func (l *Link) Neigh(ip netip.Addr, mac net.HardwareAddr) error {
	return l.NS.Do(func() error {
		return netlink.NeighSet(&netlink.Neigh{
			LinkIndex: l.Index, State: netlink.NUD_PERMANENT, IP: ip.AsSlice(), HardwareAddr: mac,
			Family: map[bool]int{true: netlink.FAMILY_V4, false: netlink.FAMILY_V6}[ip.Is4()],
		})
	})
}
