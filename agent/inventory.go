package agent

import (
	"fmt"
	"os"
	"runtime"
	"sync"

	"github.com/hashicorp/go-hclog"

	"github.com/linerate/linerate/doctor"
	"github.com/linerate/linerate/internal/cluster/gossip"
	"github.com/linerate/linerate/internal/ethtool"
	"github.com/linerate/linerate/pktgen"
	"github.com/linerate/linerate/pktgen/afxdp"
	"github.com/linerate/linerate/pktgen/choose"
	"github.com/linerate/linerate/pktgen/xdp"
	"github.com/linerate/linerate/receiver"
	"github.com/linerate/linerate/topology"
	"github.com/linerate/linerate/topology/cpuset"
)

// inventory is what the agent knows of its host: the data NIC's topology
// (read once at start), the backends and receiver methods it can run, and
// its interfaces (read when asked).
type inventory struct {
	root   *topology.DirRoot
	iface  string
	role   gossip.Role
	netOS  netOS
	clock  clockReader
	thread nsThread
	log    hclog.Logger
	// fixed is the generator every send uses when the agent was given one
	// (Config.Backend): the only backend it has, and nothing is probed.
	fixed pktgen.BackendName

	mu  sync.Mutex
	nic nicFacts

	// afxdpOnce probes the afxdp backend once, at start (the gossip
	// tags), into afxdpErr: a probe binds an AF_XDP socket on the data
	// NIC's queue 0, which a Describe during a run (the start's timing
	// one) must not do.
	afxdpOnce sync.Once
	afxdpErr  error
}

// nicFacts are what inspect found of the data NIC.
type nicFacts struct {
	nic    *topology.NIC
	report *topology.Report
	numa   int
	queues int
	speed  int64
	err    error // why there is no NIC topology (a virtual device)
	online []int // without a NIC topology: the online CPUs, reported as local
	// cpus are the host's online CPUs (empty when they cannot be read).
	cpus cpuset.Set
}

// description is everything Describe tells of the agent but its lease.
type description struct {
	host, kernel, version string
	role                  gossip.Role
	iface                 string
	nic                   nicFacts
	link                  ifaceInfo
	linkErr               error
	driver                ethtool.DriverInfo
	driverOK              bool
	model                 string
	backends              []pktgen.BackendName
	methods               []receiver.Method
	// receiverMemory is the receiver's memory budget in bytes (0: not a
	// receiver).
	receiverMemory uint64
	// lease is who holds a current lease (leased).
	lease  holderInfo
	leased bool
	// clock is the host's clock discipline now.
	clock clockInfo
	// checks are the host's checks for the run Describe was asked about
	// (nil with checksErr when they could not run).
	checks    *doctor.Report
	checksErr error
	// allowFixes are the fix classes the agent's --allow-fixes allows.
	allowFixes []doctor.FixClass
}

// inspect reads the NIC once at start; an interface without a device
// (veth) has no queues, which is fine.
func (i *inventory) inspect() {
	f := nicFacts{numa: -1}
	nic, err := topology.Inspect(i.root, i.iface)
	if err != nil {
		f.err = err
		i.log.Info("no NIC topology for the interface: reporting no queues", "iface", i.iface, "why", err)
		if online, err := topology.OnlineCPUs(i.root); err == nil {
			f.online = online.CPUs()
		}
	} else {
		f.nic, f.report = nic, topology.ShowReport(nic)
		f.numa, f.queues = nic.NUMANode, nic.Queues()
	}
	if online, err := topology.OnlineCPUs(i.root); err == nil {
		f.cpus = online
	}
	f.speed = topology.LinkSpeedMbps(i.root, i.iface)
	i.mu.Lock()
	i.nic = f
	i.mu.Unlock()
}

// facts are what inspect found.
func (i *inventory) facts() nicFacts {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.nic
}

// link reads the named interface in the agent's network namespace.
func (i *inventory) link(name string) (info ifaceInfo, err error) {
	err = i.thread.do(func() (err error) { info, err = i.netOS.iface(name); return err })
	return info, err
}

// describe reads what Describe tells.
func (i *inventory) describe(version string) description {
	d := description{version: version, role: i.role, iface: i.iface, nic: i.facts(), kernel: kernelRelease()}
	d.host, _ = os.Hostname()
	d.link, d.linkErr = i.link(i.iface)
	if err := i.thread.do(func() (err error) { d.driver, err = i.netOS.driverInfo(i.iface); return err }); err == nil {
		d.driverOK = true
	}
	d.model = topology.PCIModel(i.root, i.iface)
	d.backends, d.methods = i.backends(), i.receiverMethods()
	if i.clock != nil {
		d.clock = i.clock()
	}
	return d
}

// linkWarning is the Describe warning of an interface that could not be
// read.
func (d description) linkWarning() string {
	return fmt.Sprintf("interface %s: %v", d.iface, d.linkErr)
}

func (i *inventory) xdpBackend() *xdp.Backend {
	b := xdp.New(i.log)
	b.ThreadInit = i.thread.init
	return b
}

func (i *inventory) afxdpBackend() *afxdp.Backend {
	b := afxdp.New(i.log)
	b.ThreadInit = i.thread.init
	return b
}

// backends are the sender backends this host can run now: the one it
// was given, or those whose probes pass.
func (i *inventory) backends() []pktgen.BackendName {
	if !i.role.Sends() {
		return nil
	}
	if i.fixed != "" {
		return []pktgen.BackendName{i.fixed}
	}
	var out []pktgen.BackendName
	if choose.KernelAvailable(nil) == nil {
		out = append(out, pktgen.BackendKernel)
	}
	if i.xdpBackend().Probe(i.iface) == nil {
		out = append(out, pktgen.BackendXDP)
	}
	i.afxdpOnce.Do(func() { i.afxdpErr = i.afxdpBackend().Probe(i.iface) })
	if i.afxdpErr == nil {
		out = append(out, pktgen.BackendAFXDP)
	}
	if runtime.GOOS == "linux" {
		out = append(out, pktgen.BackendAFPacket)
	}
	return out
}

// receiverMethods are the counting methods the receiver can use.
func (i *inventory) receiverMethods() []receiver.Method {
	if !i.role.Receives() || runtime.GOOS != "linux" {
		return nil
	}
	return []receiver.Method{receiver.MethodXDP, receiver.MethodAFPacket, receiver.MethodAFXDP}
}

// hostCPUs are the host's online CPUs, as read at start (empty: unknown).
func (i *inventory) hostCPUs() cpuset.Set { return i.facts().cpus }

// cpuCount is how many CPUs per-CPU state is kept on: the online CPUs,
// at least the CPUs Go sees.
func (i *inventory) cpuCount() int { return max(i.hostCPUs().Len(), runtime.NumCPU()) }
