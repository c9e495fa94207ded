package agent

import (
	"errors"
	"net"
	"net/netip"

	"github.com/hashicorp/go-hclog"

	"github.com/linerate/linerate/pktgen"
	"github.com/linerate/linerate/pktgen/choose"
	"github.com/linerate/linerate/topology"
)

// LocalSend is a send started on this host without a coordinator
// (`linerate send`), composed as the agent composes a Configure's
// (compose.go). Where the agent sends on the queues it tuned, a local
// send runs on the queues topology plans for the NIC (which `linerate
// irq apply` pins), and it may take the destination's MAC from the
// neighbour table. Its threads are laid out before its backend is
// chosen, so that a bad input is refused before pktgen's module is
// loaded: one per CPU, each on the first queue planned for it.
type LocalSend struct {
	// Root is the host's files: the NIC topology, the online CPUs and
	// the neighbour table.
	Root topology.Root
	// Config is the send as given: Device and DstMin at least. An empty
	// SrcMin, DstMAC or CPUs is taken from the host.
	Config pktgen.Config
	// Threads is how many queues the plan covers when Config has no CPUs
	// (0: every queue).
	Threads int
	// Count and Rate are totals over the threads (0: none), split once
	// the threads are laid out.
	Count, Rate uint64
	// Names are how errors name the inputs: a command's flags.
	Names SendNames
	// Log says where the threads run and why.
	Log hclog.Logger

	// netOS reads the interface (nil: the host's, in the calling
	// thread's network namespace).
	netOS netOS
}

// Compose completes and checks the send's configuration. Its errors are
// of kind ErrInvalid (the input, named by Names) or ErrHost.
func (l LocalSend) Compose() (*pktgen.Config, error) {
	log := logOr(l.Log)
	numa := -1
	host := sendHost{
		link: l.link,
		neighbour: func(ip netip.Addr) (net.HardwareAddr, error) {
			return topology.Neighbour(l.Root, ip)
		},
		place: func() ([]pktgen.QueuePin, []int, string, error) {
			pins, untuned, node, err := l.place(log)
			numa = node
			return pins, untuned, "", err
		},
	}
	cfg, _, _, err := compose(sendInput{cfg: l.Config, count: l.Count, rate: l.Rate, names: l.Names}, host)
	if err != nil {
		return nil, err
	}
	if err := checkSources(cfg, l.Names); err != nil {
		return nil, err
	}
	if len(l.Config.CPUs) == 0 && cfg.Queues != nil {
		log.Info("threads on the NIC's planned queue CPUs", "iface", cfg.Device, "numa_node", numa, "cpus", cfg.CPUs, "queues", cfg.Queues)
	}
	return cfg, nil
}

// Backend chooses the backend named (choose.Backend; load, when set,
// loads pktgen's module when "auto" finds none) for cfg, a Compose
// result, and checks cfg against it. It says why it chose it.
func (l LocalSend) Backend(cfg *pktgen.Config, name pktgen.BackendName, load func() error) (pktgen.Backend, string, error) {
	be, why, err := chooseBackend(name, cfg.Device, l.Names.Backend, choose.Options{Log: l.Log, LoadModule: load})
	if err != nil {
		return nil, "", err
	}
	if err := checkBackend(cfg, be); err != nil {
		return nil, "", err
	}
	return be, why, nil
}

// link reads the interface: its MTU from the host's files (Root, which
// may be a snapshot of the host), else from the interface itself, and its
// MAC and addresses from the interface. One that cannot be read has no
// addresses and, without the files, an unknown MTU; what needs them says
// so.
func (l LocalSend) link(device string) (ifaceInfo, error) {
	reader := l.netOS
	if reader == nil {
		reader = hostNetOS{}
	}
	info, err := reader.iface(device)
	if err != nil {
		logOr(l.Log).Debug("interface unreadable: no address", "iface", device, "error", err)
		info = ifaceInfo{}
	}
	if mtu, err := topology.MTU(l.Root, device); err == nil {
		info.mtu = mtu
	} else {
		logOr(l.Log).Debug("no MTU in the host's files: the interface's", "iface", device, "mtu", info.mtu, "error", err)
	}
	return info, nil
}

// place is where the threads may run: the queues topology plans for the
// NIC (Threads of them; 0: all) on their CPUs, and on a NIC without
// queue IRQs its first local CPU; a virtual device (veth) has no NIC
// topology, and runs max(Threads, 1) threads on the first online CPUs.
// numa is the NIC's node (-1: none).
func (l LocalSend) place(log hclog.Logger) (pins []pktgen.QueuePin, untuned []int, numa int, err error) {
	dev, n := l.Config.Device, l.Names
	nic, err := topology.Inspect(l.Root, dev)
	switch {
	case errors.Is(err, topology.ErrNoInterface):
		return nil, nil, -1, failf(ErrInvalid, "%s: %w", n.Device, err)
	case errors.Is(err, topology.ErrNoDevice):
		set, err := topology.OnlineCPUs(l.Root)
		if err != nil {
			return nil, nil, -1, fail(ErrHost, err)
		}
		online := set.CPUs()
		t := max(l.Threads, 1)
		if t > len(online) {
			return nil, nil, -1, failf(ErrInvalid, "%s %d: only %d CPUs are online", n.Threads, t, len(online))
		}
		log.Info("virtual interface: threads on the first online CPUs", "iface", dev, "cpus", online[:t])
		return nil, online[:t], -1, nil
	case err != nil:
		return nil, nil, -1, fail(ErrHost, err)
	}
	p, err := topology.MakePlan(nic, topology.PlanOptions{Threads: l.Threads})
	if err != nil {
		return nil, nil, -1, failf(ErrInvalid, "%s: %w", n.Threads, err)
	}
	for _, as := range p.Assignments {
		pins = append(pins, pktgen.QueuePin{Queue: as.Queue, CPU: as.CPU})
	}
	if len(pins) == 0 {
		log.Warn("no queue IRQs found: one thread on the first local CPU", "iface", dev, "cpu", p.Candidates[0])
		return nil, p.Candidates[:1], nic.NUMANode, nil
	}
	return pins, nil, nic.NUMANode, nil
}

// logOr is l, or a logger that drops everything.
func logOr(l hclog.Logger) hclog.Logger {
	if l == nil {
		return hclog.NewNullLogger()
	}
	return l
}
