package doctor

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"

	"github.com/linerate/linerate/topology"
	"github.com/linerate/linerate/topology/cpuset"
)

// env is what every check reads first: the interface as topology sees it,
// the CPUs the run will use, the kernel release, the NIC's ethtool.
type env struct {
	h Host
	o Options
	// nic is the interface's device and queue IRQs; nil for a virtual
	// interface (nicErr is topology.ErrNoDevice) or when it cannot be read.
	nic    *topology.NIC
	nicErr error
	plan   *topology.Plan // nil when nic is
	cpus   cpuset.Set     // the CPUs the run will use
	online cpuset.Set
	kernel string // /proc/sys/kernel/osrelease
	// ethtool is the interface's ethtool parameters; nil with ethErr when
	// they cannot be read.
	ethtool NIC
	ethErr  error
	// addrs are the run's addresses (Options.Addrs, else the interface's);
	// addrsErr says why the interface's could not be read.
	addrs    []netip.Addr
	addrsErr error
	// fw is the ruleset as Host.Firewall judged it for addrs, read once
	// by the first check that needs it (fwErr when it cannot be read).
	fw    *FirewallState
	fwErr error
}

// newEnv checks the options (the role defaults to both) and reads what
// every check and fix shares. Only a bad option or a missing interface is
// an error: everything else a check cannot read is that check's evidence.
func newEnv(h Host, o Options) (*env, error) {
	if err := o.Check(); err != nil {
		return nil, fmt.Errorf("doctor: %w", err)
	}
	if o.Role == "" {
		o.Role = RoleBoth
	}
	e := &env{h: h, o: o, addrs: o.Addrs}
	if _, err := h.Root.Stat("/sys/class/net/" + o.Iface); err != nil {
		return nil, fmt.Errorf("doctor %s: %w: /sys/class/net/%s: %v", o.Iface, topology.ErrNoInterface, o.Iface, err)
	}
	e.online, _ = topology.OnlineCPUs(h.Root)
	e.nic, e.nicErr = topology.Inspect(h.Root, o.Iface)
	if e.nicErr != nil {
		e.nic = nil
	} else if p, err := topology.MakePlan(e.nic, topology.PlanOptions{}); err == nil {
		e.plan = p
	}
	switch {
	case o.CPUs != nil:
		e.cpus = cpuset.Of(o.CPUs...)
	case e.plan != nil:
		for _, a := range e.plan.Assignments {
			e.cpus = e.cpus.Union(cpuset.Of(a.CPU))
		}
	}
	if e.cpus.IsEmpty() {
		e.cpus = e.online
	}
	if e.addrs == nil && h.IfaceAddrs != nil {
		e.addrs, e.addrsErr = h.IfaceAddrs(o.Iface)
	}
	if b, err := h.Root.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		e.kernel = strings.TrimSpace(string(b))
	}
	if h.OpenNIC == nil {
		e.ethErr = errors.New("ethtool cannot be read on this host root (a snapshot or fixture)")
	} else {
		e.ethtool, e.ethErr = h.OpenNIC(o.Iface)
	}
	return e, nil
}

func (e *env) close() {
	if e.ethtool != nil {
		_ = e.ethtool.Close()
	}
}

// virtual is true for an interface without a device (veth, a bridge).
func (e *env) virtual() bool { return errors.Is(e.nicErr, topology.ErrNoDevice) }

// read reads a file through the root, trimmed.
func (e *env) read(name string) (string, error) {
	b, err := e.h.Root.ReadFile(name)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}

// evidence is "name: content" for a file, or "name: not readable (err)".
func (e *env) evidence(name string) string {
	s, err := e.read(name)
	if err != nil {
		return fmt.Sprintf("%s: not readable (%v)", name, err)
	}
	return fmt.Sprintf("%s: %s", name, s)
}
