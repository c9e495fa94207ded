//go:build linux

package lab

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/linerate/linerate/coordinator"
	"github.com/linerate/linerate/internal/config"
	lrnetns "github.com/linerate/linerate/internal/netns"
)

// Spec describes a lab: N senders and M receivers, each a namespace with
// one data interface ("data0") into the switch namespace, where all ports
// share a bridge. Test traffic crosses sender → switch → receiver.
type Spec struct {
	Name      string // lab name, part of every namespace name ("lr-<Name>-…"); short
	Senders   int
	Receivers int
	Queues    int  // rx/tx queues per veth end (default 1)
	Loss      Loss // applied on the switch ports facing the senders
	// ShapeBPS, when set, puts a tbf qdisc of this many bits per second
	// on the switch ports toward the receivers: a slower link.
	ShapeBPS uint64
	// Mgmt builds the management network: a second bridge in the switch
	// namespace, an interface mgmt0 per host and one in the calling
	// process's namespace (named MgmtLinkName), all in 198.19.K.0/24.
	Mgmt bool
	// Hosts is what a host is: HostsNetns (a network namespace; the
	// default when empty) or HostsVM (a qemu guest with its own kernel).
	Hosts string
	// VCPUs is each VM host's vCPU count, split over two NUMA nodes
	// (HostsVM; DefaultVCPUs when 0). Queues is then its data NIC's
	// queue pairs.
	VCPUs int
	// Delay is added on the path toward the receivers (HostsVM only):
	// netem on each sender guest's data interface, installed before its
	// agent starts. Only frames queued to the interface pass it: kernel
	// pktgen in xmit_mode queue_xmit (Spec.XmitMode), not start_xmit.
	Delay Delay
	// Both makes every host a sender and a receiver (`lab run --bidir`,
	// `--reverse`): its agent runs with role both, and every switch port
	// has the port program (Loss: on the frames from its host) and the
	// shaper (ShapeBPS: on the frames toward it), so traffic either way
	// crosses the same kind of path.
	Both bool
	// VLAN, when set (1-4094), is the 802.1Q VLAN the lab's traffic is
	// tagged with: every agent may tag with it (--allow-vlan) and each
	// sender's port program counts the tagged test packets. The switch
	// is a plain bridge, which forwards a tagged frame with its tag, as
	// it forwards untagged ones: this machine's kernel has no VLAN
	// filtering in its bridge (CONFIG_BRIDGE_VLAN_FILTERING), so a
	// VLAN-aware switch cannot be built here.
	VLAN int
}

// What a lab's hosts are (Spec.Hosts).
const (
	HostsNetns = "netns"
	HostsVM    = "vm"
)

// hostName is the name of the lab's host i (from 0) of role: s1, s2, …
// for the senders, r1, r2, … for the receivers.
func hostName(role string, i int) string { return fmt.Sprintf("%c%d", role[0], i+1) }

// SenderNames are the names of the spec's senders (s1, s2, …), as their
// agents join the cluster.
func (spec Spec) SenderNames() []string { return hostNames("sender", spec.Senders) }

// ReceiverNames are the names of the spec's receivers (r1, r2, …).
func (spec Spec) ReceiverNames() []string { return hostNames("receiver", spec.Receivers) }

func hostNames(role string, n int) []string {
	var out []string
	for i := range n {
		out = append(out, hostName(role, i))
	}
	return out
}

// Host is one namespace of the lab.
type Host struct {
	Name   string // "s1", "r2"
	Role   string // "sender" or "receiver"
	NS     *lrnetns.NS
	Data   *lrnetns.Link // data0, in the host's namespace
	Switch *lrnetns.Link // the switch port facing it
	Port   *Port         // XDP program on the switch port (senders' ports always; pass or lossy)
	Mgmt   *lrnetns.Link // mgmt0, in the host's namespace (Spec.Mgmt)
}

// MgmtAddr is the host's management address (invalid without Spec.Mgmt).
func (h *Host) MgmtAddr() netip.Addr {
	if h.Mgmt == nil {
		return netip.Addr{}
	}
	return h.Mgmt.Addr.Addr()
}

// agentRole is the role host h's agent runs with: its own, or both in a
// lab whose every host sends and receives (Spec.Both).
func (spec Spec) agentRole(h *Host) string {
	if spec.Both {
		return "both"
	}
	return h.Role
}

// Addr is the host's data address.
func (h *Host) Addr() netip.Addr { return h.Data.Addr.Addr() }

// Addr6 is the host's IPv6 data address.
func (h *Host) Addr6() netip.Addr { return h.Data.Addr6.Addr() }

// dataAddrs are the data addresses of the lab's host numbered octet
// (senders 1…, receivers 101…): 198.18.0.octet/24 and 2001:2::octet/64,
// both from the benchmarking ranges (RFC 2544, RFC 5180).
func dataAddrs(octet int) (v4, v6 netip.Prefix) {
	a6 := [16]byte{0x20, 0x01, 0x00, 0x02, 15: byte(octet)}
	return netip.PrefixFrom(netip.AddrFrom4([4]byte{198, 18, 0, byte(octet)}), 24), netip.PrefixFrom(netip.AddrFrom16(a6), 64)
}

// vlanSettings are the agent settings a lab with a VLAN adds: every
// agent may tag its frames with the VLAN its switch carries, no other.
func (spec Spec) vlanSettings() []config.Setting {
	if spec.VLAN == 0 {
		return nil
	}
	return []config.Setting{config.List("allow-vlan", strconv.Itoa(spec.VLAN))}
}

// Lab is a running lab.
type Lab struct {
	Spec      Spec
	Switch    *lrnetns.NS
	Senders   []*Host
	Receivers []*Host
	// MgmtHost is the management link in the calling process's namespace
	// (Spec.Mgmt): the coordinator reaches the agents through it.
	MgmtHost *lrnetns.Link
	hostNS   *lrnetns.NS
	log      hclog.Logger
	dir      string           // StartAgents' directory, removed by Down
	agents   []*Agent         // running agent processes
	machines []*machine       // running VM hosts (Spec.Hosts HostsVM)
	delays   map[string]Delay // the netem each VM sender's guest holds, read back (Spec.Delay)
	spawner  *spawner
}

// MgmtLinkName is the name of a lab's management link in the calling
// process's namespace.
func MgmtLinkName(lab string) string { return "lrm-" + lab }

// Prefix is the namespace name prefix of a lab.
func Prefix(name string) string { return "lr-" + name + "-" }

// CheckName accepts 1-20 letters, digits, '_' and '.': the name goes
// into namespace, interface and directory names.
func CheckName(name string) error {
	ok := name != "" && len(name) <= 20 && name != "." && name != ".."
	for _, c := range name {
		ok = ok && (c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.')
	}
	if !ok {
		return fmt.Errorf("lab name %q: 1-20 letters, digits, '_' or '.'", name)
	}
	return nil
}

// Validate checks the spec before anything is built.
func (spec Spec) Validate() error {
	if err := CheckName(spec.Name); err != nil {
		return err
	}
	if spec.Mgmt && len(MgmtLinkName(spec.Name)) > 15 {
		return fmt.Errorf("lab name %q: at most %d characters with a management network (interface %s)", spec.Name, 15-len(MgmtLinkName("")), MgmtLinkName(spec.Name))
	}
	if spec.Senders < 1 || spec.Receivers < 1 || spec.Senders+spec.Receivers > 200 {
		return fmt.Errorf("lab %s: %d senders and %d receivers: want at least one of each, at most 200 hosts", spec.Name, spec.Senders, spec.Receivers)
	}
	if spec.ShapeBPS > 0 {
		if err := checkShape(float64(spec.ShapeBPS)); err != nil {
			return fmt.Errorf("lab %s: shaping at %w", spec.Name, err)
		}
	}
	if err := (&coordinator.Spec{VLAN: spec.VLAN}).CheckVLAN(); err != nil {
		return fmt.Errorf("lab %s: --%w", spec.Name, err)
	}
	if spec.Loss.Every == 1 {
		return fmt.Errorf("lab %s: losing every 1st packet would drop every packet; want every 2nd or more", spec.Name)
	}
	if spec.Loss.BasisPoints > 10000 || (spec.Loss.Every > 0 && spec.Loss.BasisPoints > 0) {
		return fmt.Errorf("lab %s: loss every %d and %d basis points: want one of them, at most 10000 basis points (100 %%)", spec.Name, spec.Loss.Every, spec.Loss.BasisPoints)
	}
	if err := spec.Delay.Check(); err != nil {
		return fmt.Errorf("lab %s: %w", spec.Name, err)
	}
	if spec.Both && !spec.Delay.IsZero() {
		return fmt.Errorf("lab %s: delay %s with every host sending (--bidir, --reverse): the delay is netem on the named senders' egress, so traffic toward them would not pass it: run each direction apart, without --bidir or --reverse", spec.Name, spec.Delay)
	}
	switch spec.Hosts {
	case "", HostsNetns:
		if !spec.Delay.IsZero() {
			return fmt.Errorf("lab %s: delay %s: network namespace hosts share this host's kernel, which has no netem qdisc: a delay needs VM hosts (--hosts vm), whose guest kernel has sch_netem", spec.Name, spec.Delay)
		}
		if spec.Queues < 0 || spec.Queues > 64 {
			return fmt.Errorf("lab %s: %d queues: want 1-64", spec.Name, spec.Queues)
		}
		if spec.VCPUs != 0 {
			return fmt.Errorf("lab %s: %d vCPUs: only VM hosts have vCPUs (--hosts vm)", spec.Name, spec.VCPUs)
		}
	case HostsVM:
		return spec.validateVM()
	default:
		return fmt.Errorf("lab %s: hosts %q: want %q (network namespaces) or %q (qemu guests)", spec.Name, spec.Hosts, HostsNetns, HostsVM)
	}
	return nil
}

// Up builds the lab. On error everything made so far is removed.
func Up(spec Spec, log hclog.Logger) (l *Lab, err error) {
	if log == nil {
		log = hclog.NewNullLogger()
	}
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	l = &Lab{Spec: spec, log: log.Named("lab").With("lab", spec.Name)}
	defer func() {
		if err != nil {
			if derr := l.Down(); derr != nil {
				err = errors.Join(err, derr)
			}
			l = nil
		}
	}()
	if l.Switch, err = lrnetns.New(Prefix(spec.Name) + "sw"); err != nil {
		return l, err
	}
	if err = l.Switch.Do(func() error {
		// The switch is a layer-2 device: nothing in its namespace
		// speaks IPv6. A bridge with IPv6 on solicits routers for as
		// long as it is up (4 s, 8 s, 16 s … apart), and floods each
		// solicitation out of every port, where a shaped port counts
		// the one it drops among the run's (CI saw a shaped VM run's
		// switch drop one frame more than the test lost).
		for _, conf := range []string{"all", "default"} {
			if err := os.WriteFile("/proc/sys/net/ipv6/conf/"+conf+"/disable_ipv6", []byte("1\n"), 0o644); err != nil && !os.IsNotExist(err) {
				return fmt.Errorf("disable IPv6 (%s): %w", conf, err)
			}
		}
		if err := addBridge(&netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: "lrbr0"}}); err != nil {
			return err
		}
		if !spec.Mgmt {
			return nil
		}
		return addBridge(&netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: mgmtBridge}})
	}); err != nil {
		return l, fmt.Errorf("lab %s: switch bridge: %w", spec.Name, err)
	}
	var mgmtNet netip.Prefix
	if spec.Mgmt {
		if mgmtNet, err = freeMgmtNet(spec.Name); err != nil {
			return l, fmt.Errorf("lab %s: %w", spec.Name, err)
		}
		if l.hostNS, err = lrnetns.Host(); err != nil {
			return l, err
		}
		if l.MgmtHost, _, err = lrnetns.Veth(l.hostNS, MgmtLinkName(spec.Name), l.Switch, "mhost", lrnetns.VethOptions{AddrA: mgmtAddr(mgmtNet, 254)}); err != nil {
			return l, fmt.Errorf("lab %s: management link: %w", spec.Name, err)
		}
		if err := l.enslave("mhost", mgmtBridge); err != nil {
			return l, err
		}
	}
	add := func(role string, i int) (*Host, error) {
		name := hostName(role, i)
		h := &Host{Name: name, Role: role}
		octet := 1 + i
		if role == "receiver" {
			octet = 101 + i
		}
		addr, addr6 := dataAddrs(octet)
		var mgmt netip.Prefix
		if spec.Mgmt {
			mgmt = mgmtAddr(mgmtNet, octet)
		}
		var err error
		if spec.Hosts == HostsVM {
			err = l.addVMHost(h, addr, addr6, mgmt)
		} else {
			err = l.addNetnsHost(h, addr, addr6, mgmt)
		}
		if err != nil {
			return h, err
		}
		if err := l.enslave(name, "lrbr0"); err != nil {
			return h, err
		}
		if spec.Mgmt {
			if err := l.enslave("m"+name, mgmtBridge); err != nil {
				return h, err
			}
		}
		if (role == "receiver" || spec.Both) && spec.ShapeBPS > 0 {
			if err := shape(l.Switch, name, spec.ShapeBPS); err != nil {
				return h, err
			}
		}
		if role == "sender" || spec.Both {
			// Frames the xdp backend transmits into a veth are accepted
			// only when the peer end runs XDP: always a port program here.
			if h.Port, err = AttachPort(l.Switch, name, spec.Loss); err != nil {
				return h, err
			}
		}
		if role == "receiver" && !spec.Both && spec.Hosts != HostsVM {
			// A receiver sends back a round trip's latency stream by
			// XDP_TX (run --latency rtt), which a veth delivers only to a
			// peer that runs XDP: a port program that drops nothing, and
			// counts the reflections as the switch's own truth (with
			// Both every port has its program already, above).
			if h.Port, err = AttachPort(l.Switch, name, Loss{}); err != nil {
				return h, err
			}
		}
		return h, nil
	}
	for i := range spec.Senders {
		h, err := add("sender", i)
		if h != nil && (h.NS != nil || h.Data != nil) {
			l.Senders = append(l.Senders, h)
		}
		if err != nil {
			return l, fmt.Errorf("lab %s: sender %d: %w", spec.Name, i+1, err)
		}
	}
	for i := range spec.Receivers {
		h, err := add("receiver", i)
		if h != nil && (h.NS != nil || h.Data != nil) {
			l.Receivers = append(l.Receivers, h)
		}
		if err != nil {
			return l, fmt.Errorf("lab %s: receiver %d: %w", spec.Name, i+1, err)
		}
	}
	// The switch knows every host's port from the start, as a learned
	// switch would: receivers never send, so without this the bridge
	// would flood their traffic to every port.
	for _, h := range l.Hosts() {
		if err := l.Switch.Do(func() error {
			return netlink.NeighSet(&netlink.Neigh{
				LinkIndex: h.Switch.Index, Family: unix.AF_BRIDGE, State: netlink.NUD_NOARP,
				Flags: netlink.NTF_MASTER, HardwareAddr: h.Data.MAC,
			})
		}); err != nil {
			return l, fmt.Errorf("lab %s: switch forwarding entry %s → port %s: %w", spec.Name, h.Data.MAC, h.Name, err)
		}
	}
	// Static neighbours both ways, IPv4 and IPv6: no ARP or neighbour
	// solicitation before (or during) a run. (A VM host's kernel is its
	// own: its agent's traffic never asks the stack for a neighbour, and
	// nothing else sends on its data NIC.)
	for _, s := range l.Senders {
		if spec.Hosts == HostsVM {
			break
		}
		for _, r := range l.Receivers {
			for _, n := range []struct {
				on   *Host
				ip   netip.Addr
				peer *Host
			}{{s, r.Addr(), r}, {s, r.Addr6(), r}, {r, s.Addr(), s}, {r, s.Addr6(), s}} {
				if err := n.on.Data.Neigh(n.ip, n.peer.Data.MAC); err != nil {
					return l, fmt.Errorf("lab %s: neighbour %s on %s: %w", spec.Name, n.ip, n.on.Name, err)
				}
			}
		}
	}
	l.log.Info("lab up", "senders", len(l.Senders), "receivers", len(l.Receivers), "loss", spec.Loss.String(), "vlan", spec.VLAN)
	return l, nil
}

const mgmtBridge = "lrmg0"

// addBridge adds br in the calling thread's namespace, its own IPv6
// quiet (a switch sends nothing of its own), and brings it up.
func addBridge(br *netlink.Bridge) error {
	if err := netlink.LinkAdd(br); err != nil {
		return fmt.Errorf("add bridge %s: %w", br.Name, err)
	}
	if err := lrnetns.QuietIPv6(br.Name); err != nil {
		return err
	}
	return netlink.LinkSetUp(br)
}

// enslave attaches the switch namespace's port to a bridge there.
func (l *Lab) enslave(port, bridge string) error {
	if err := l.Switch.Do(func() error {
		p, err := netlink.LinkByName(port)
		if err != nil {
			return err
		}
		br, err := netlink.LinkByName(bridge)
		if err != nil {
			return err
		}
		return netlink.LinkSetMaster(p, br)
	}); err != nil {
		return fmt.Errorf("lab %s: attach %s to bridge %s: %w", l.Spec.Name, port, bridge, err)
	}
	return nil
}

// Hosts returns senders then receivers.
func (l *Lab) Hosts() []*Host { return append(append([]*Host{}, l.Senders...), l.Receivers...) }

// Down detaches every program and removes every namespace of the lab
// (their links go with them). It is safe to call more than once.
func (l *Lab) Down() error {
	var errs []error
	if len(l.agents) > 0 {
		errs = append(errs, l.StopAgents(15*time.Second))
	}
	if len(l.machines) > 0 {
		errs = append(errs, l.stopMachines())
	}
	if l.spawner != nil {
		l.spawner.close()
		l.spawner = nil
	}
	for _, h := range l.Hosts() {
		if h.Port != nil {
			errs = append(errs, h.Port.Close())
			h.Port = nil
		}
		errs = append(errs, h.NS.Close()) // nil for a VM host
	}
	if l.MgmtHost != nil {
		// Deleting the switch namespace would take it too, but later.
		errs = append(errs, l.hostNS.Do(func() error {
			link, err := netlink.LinkByName(l.MgmtHost.Name)
			if err != nil {
				return nil // gone already
			}
			return netlink.LinkDel(link)
		}))
		l.MgmtHost = nil
	}
	if l.Switch != nil {
		errs = append(errs, l.Switch.Close())
	}
	if l.hostNS != nil {
		errs = append(errs, l.hostNS.Close())
	}
	if l.dir != "" {
		errs = append(errs, os.RemoveAll(l.dir))
		l.dir = ""
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("lab %s down: %w", l.Spec.Name, err)
	}
	l.log.Info("lab down")
	return nil
}

// Leftovers lists namespaces of labs (name prefix "lr-") that exist now,
// e.g. after a crash.
func Leftovers() ([]string, error) {
	ents, err := os.ReadDir("/run/netns")
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list /run/netns: %w", err)
	}
	var out []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "lr-") {
			out = append(out, e.Name())
		}
	}
	return out, nil
}

// RemoveLeftovers deletes the namespaces Leftovers lists with the given
// prefix ("lr-" for all).
func RemoveLeftovers(prefix string) ([]string, error) {
	names, err := Leftovers()
	if err != nil {
		return nil, err
	}
	var removed []string
	var errs []error
	for _, n := range names {
		if !strings.HasPrefix(n, prefix) {
			continue
		}
		if err := netns.DeleteNamed(n); err != nil {
			errs = append(errs, fmt.Errorf("remove namespace %s: %w", n, err))
			continue
		}
		removed = append(removed, n)
	}
	return removed, errors.Join(errs...)
}

// Index is the host's number within its role, from 0.
func (h *Host) Index() int {
	var n int
	fmt.Sscanf(h.Name[1:], "%d", &n)
	return n - 1
}
