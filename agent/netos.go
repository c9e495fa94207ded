package agent

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"runtime"

	"github.com/linerate/linerate/internal/ethtool"
)

// netOS is what the agent reads of the host's network stack (netlink and
// the standard library; a fake in tests). Every method runs in the agent's
// network namespace (on a thread of nsThread).
type netOS interface {
	// defaultRouteIfaces names the interfaces of the default routes of
	// the main table, IPv4 and IPv6 (every next hop of a multipath one).
	defaultRouteIfaces() ([]string, error)
	// iface is the named interface's MAC, addresses and MTU: the one
	// reading of them the agent makes.
	iface(name string) (ifaceInfo, error)
	// txDropped is the named device's tx_dropped counter.
	txDropped(name string) (uint64, error)
	// driverInfo is what ethtool -i tells of the named device.
	driverInfo(name string) (ethtool.DriverInfo, error)
	// defaultSource is the default route's source address, and
	// sourceToward the address a packet to hostport leaves from: the
	// management address's candidates (mgmtaddr.go).
	defaultSource() (netip.Addr, error)
	sourceToward(ctx context.Context, hostport string) (netip.Addr, error)
}

// ifaceInfo is an interface's MAC, addresses and MTU.
type ifaceInfo struct {
	mac net.HardwareAddr // nil without one (loopback)
	// addrs are its addresses in the kernel's order (link-local
	// included), unmapped and without zone.
	addrs []netip.Addr
	mtu   int
}

// ips are the addresses as text.
func (i ifaceInfo) ips() []string {
	var out []string
	for _, a := range i.addrs {
		out = append(out, a.String())
	}
	return out
}

// iface reads the interface through the standard library, in the calling
// thread's network namespace.
func (hostNetOS) iface(name string) (ifaceInfo, error) {
	ifi, err := net.InterfaceByName(name)
	if err != nil {
		return ifaceInfo{}, err
	}
	info := ifaceInfo{mtu: ifi.MTU}
	if len(ifi.HardwareAddr) > 0 {
		info.mac = ifi.HardwareAddr
	}
	addrs, err := ifi.Addrs()
	if err != nil {
		return ifaceInfo{}, err
	}
	for _, a := range addrs {
		if p, err := netip.ParsePrefix(a.String()); err == nil {
			info.addrs = append(info.addrs, p.Addr().Unmap().WithZone(""))
		}
	}
	return info, nil
}

// nsThread runs work that depends on the network namespace: on a fresh
// locked OS thread after init (the thread is discarded afterwards), or
// directly without init.
type nsThread struct{ init func() error }

// do runs fn as nsThread says.
func (n nsThread) do(fn func() error) error {
	if n.init == nil {
		return fn()
	}
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the runtime discards the thread
		if err := n.init(); err != nil {
			errc <- fmt.Errorf("thread init: %w", err)
			return
		}
		errc <- fn()
	}()
	return <-errc
}

// driverInfo asks the named device's driver through internal/ethtool
// (ETHTOOL_GDRVINFO), in the calling thread's network namespace; off
// Linux it is ethtool.ErrNotSupported.
func (hostNetOS) driverInfo(name string) (ethtool.DriverInfo, error) {
	r, err := ethtool.Open(name)
	if err != nil {
		return ethtool.DriverInfo{}, err
	}
	defer r.Close()
	return r.Info()
}
