package topology

import (
	"bytes"
	"errors"
	"fmt"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/linerate/linerate/topology/cpuset"
	"github.com/linerate/linerate/topology/interrupts"
	"github.com/linerate/linerate/topology/irqname"
)

// Sentinel errors callers branch on.
var (
	// ErrNoInterface is returned when the named interface does not exist on
	// the host.
	ErrNoInterface = errors.New("no such interface")
	// ErrNoDevice is returned when the interface is virtual (no device link),
	// so it has no IRQs.
	ErrNoDevice = errors.New("interface has no device")
)

// NIC is what Inspect learns about one interface.
type NIC struct {
	Iface     string // /sys/class/net/<iface>
	Driver    string // basename of device/driver
	PCI       string // PCI function address ("0000:3b:00.0"), "" when the device is not PCI
	DevPath   string // resolved sysfs path of the function that owns the IRQs
	VirtioDev string // "virtio2" for virtio NICs
	NUMANode  int    // -1 when unknown
	// LocalCPUs are the online CPUs of the NIC's node (all online CPUs when
	// the node is unknown).
	LocalCPUs  cpuset.Set
	OnlineCPUs cpuset.Set
	Isolated   cpuset.Set // isolcpus ∪ nohz_full
	NrCPUs     int        // nr_cpu_ids: mask width
	RxQueues   int        // /sys/class/net/<iface>/queues/rx-*
	TxQueues   int
	IRQSource  string // "msi_irqs" or "interrupts" (name matching)
	Vectors    []Vector
	Skipped    []Skipped
	Warnings   []string
	// siblings maps a CPU to the hardware threads of its core (itself
	// included), from core_cpus_list or thread_siblings_list.
	siblings map[int]cpuset.Set
}

// Vector is one queue IRQ of the NIC.
type Vector struct {
	Queue     int
	Dir       irqname.Dir
	IRQ       int
	Name      string
	Current   string // today's smp_affinity_list (or the mask when only smp_affinity exists)
	Effective string // effective_affinity_list, "" when absent
	Managed   bool   // affinity file not writable: kernel-managed IRQ
}

// Skipped is an IRQ of the device that is not tuned, and why.
type Skipped struct {
	IRQ    int    `json:"irq"`
	Name   string `json:"name"`
	Reason string `json:"reason"`
}

// Queues is the number of distinct queue indices with IRQs.
func (n *NIC) Queues() int {
	seen := map[int]bool{}
	for _, v := range n.Vectors {
		seen[v.Queue] = true
	}
	return len(seen)
}

var (
	bdfRE       = regexp.MustCompile(`^[0-9a-fA-F]{4,}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]$`)
	virtioDevRE = regexp.MustCompile(`^virtio\d+$`)
)

// Inspect reads what topology needs to know about iface from the host r.
func Inspect(r Root, iface string) (*NIC, error) {
	if iface == "" || strings.ContainsAny(iface, "/\x00") || iface == "." || iface == ".." {
		return nil, fmt.Errorf("inspect interface %q: %w (valid: %s)", iface, ErrNoInterface, listIfaces(r))
	}
	netdir := "/sys/class/net/" + iface
	if !exists(r, netdir) {
		return nil, fmt.Errorf("inspect interface %q: %w (valid: %s)", iface, ErrNoInterface, listIfaces(r))
	}
	if !exists(r, netdir+"/device") {
		return nil, fmt.Errorf("inspect interface %q: %w: it is a virtual interface with no IRQs to tune (interfaces with a device: %s)",
			iface, ErrNoDevice, listDeviceIfaces(r))
	}
	n := &NIC{Iface: iface, NUMANode: -1}
	dev, err := realpath(r, netdir+"/device")
	if err != nil {
		return nil, fmt.Errorf("inspect %s: resolve device link: %w", iface, err)
	}
	if drv, err := realpath(r, dev+"/driver"); err == nil {
		n.Driver = path.Base(drv)
	}
	// virtio: the netdev's device is the virtio device; the PCI function
	// that has numa_node and msi_irqs is its parent.
	n.DevPath = dev
	if isVirtio(r, dev) {
		n.VirtioDev = path.Base(dev)
		n.DevPath = path.Dir(dev)
	}
	if bdfRE.MatchString(path.Base(n.DevPath)) {
		n.PCI = strings.ToLower(path.Base(n.DevPath))
	}
	if err := n.readCPUs(r); err != nil {
		return nil, fmt.Errorf("inspect %s: %w", iface, err)
	}
	n.RxQueues, n.TxQueues = countQueues(r, netdir+"/queues")
	if err := n.readIRQs(r); err != nil {
		return nil, fmt.Errorf("inspect %s: %w", iface, err)
	}
	return n, nil
}

func isVirtio(r Root, dev string) bool {
	if sub, err := realpath(r, dev+"/subsystem"); err == nil && path.Base(sub) == "virtio" {
		return true
	}
	if m, err := readString(r, dev+"/modalias"); err == nil && strings.HasPrefix(m, "virtio:") {
		return true
	}
	return virtioDevRE.MatchString(path.Base(dev)) && !exists(r, dev+"/msi_irqs")
}

func listIfaces(r Root) string {
	ents, err := r.ReadDir("/sys/class/net")
	if err != nil || len(ents) == 0 {
		return "no interfaces found under /sys/class/net"
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

func listDeviceIfaces(r Root) string {
	ents, _ := r.ReadDir("/sys/class/net")
	var names []string
	for _, e := range ents {
		if exists(r, "/sys/class/net/"+e.Name()+"/device") {
			names = append(names, e.Name())
		}
	}
	if len(names) == 0 {
		return "none"
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

func countQueues(r Root, dir string) (rx, tx int) {
	ents, err := r.ReadDir(dir)
	if err != nil {
		return 0, 0
	}
	for _, e := range ents {
		switch {
		case strings.HasPrefix(e.Name(), "rx-"):
			rx++
		case strings.HasPrefix(e.Name(), "tx-"):
			tx++
		}
	}
	return rx, tx
}

func (n *NIC) warnf(format string, args ...any) {
	n.Warnings = append(n.Warnings, fmt.Sprintf(format, args...))
}

const cpuDir = "/sys/devices/system/cpu"

// OnlineCPUs are the host's online CPUs: where threads for a virtual
// device (no NUMA node, no queue IRQs) may run.
func OnlineCPUs(r Root) (cpuset.Set, error) {
	s, err := readString(r, cpuDir+"/online")
	if err != nil {
		return cpuset.Set{}, fmt.Errorf("read online CPUs: %w", err)
	}
	set, err := cpuset.ParseList(s, 0)
	if err != nil {
		return cpuset.Set{}, fmt.Errorf("read %s/online: %w", cpuDir, err)
	}
	return set, nil
}

func (n *NIC) readCPUs(r Root) error {
	s, err := readString(r, cpuDir+"/online")
	if err != nil {
		return fmt.Errorf("read online CPUs: %w", err)
	}
	if n.OnlineCPUs, err = cpuset.ParseList(s, 0); err != nil {
		return fmt.Errorf("read %s/online: %w", cpuDir, err)
	}
	n.NrCPUs = n.OnlineCPUs.Max() + 1
	if s, err := readString(r, cpuDir+"/possible"); err == nil {
		if p, err := cpuset.ParseList(s, 0); err == nil && p.Max()+1 > n.NrCPUs {
			n.NrCPUs = p.Max() + 1
		}
	}
	for _, f := range []string{"isolated", "nohz_full"} {
		if s, err := readString(r, cpuDir+"/"+f); err == nil && s != "" && s != "(null)" {
			set, err := cpuset.ParseList(s, n.NrCPUs)
			if err != nil {
				return fmt.Errorf("read %s/%s: %w", cpuDir, f, err)
			}
			n.Isolated = n.Isolated.Union(set)
		}
	}
	n.siblings = map[int]cpuset.Set{}
	for _, c := range n.OnlineCPUs.CPUs() {
		base := fmt.Sprintf("%s/cpu%d/topology/", cpuDir, c)
		s, err := readString(r, base+"core_cpus_list")
		if err != nil {
			s, err = readString(r, base+"thread_siblings_list")
		}
		if err != nil {
			continue
		}
		if sib, err := cpuset.ParseList(s, 0); err == nil {
			n.siblings[c] = sib
		}
	}

	nodeNote := ""
	node, err := readInt(r, n.DevPath+"/numa_node")
	switch {
	case isNotExist(err):
		nodeNote = fmt.Sprintf("%s has no numa_node (kernel without CONFIG_NUMA?)", n.devName())
	case err != nil:
		return err
	case node < 0:
		nodeNote = fmt.Sprintf("%s reports numa_node -1 (firmware gives no proximity)", n.devName())
	default:
		n.NUMANode = node
	}
	local, src := cpuset.Set{}, ""
	if s, err := readString(r, n.DevPath+"/local_cpulist"); err == nil {
		if local, err = cpuset.ParseList(s, 0); err != nil {
			return fmt.Errorf("read %s/local_cpulist: %w", n.DevPath, err)
		}
		src = "local_cpulist"
	} else if s, err := readString(r, n.DevPath+"/local_cpus"); err == nil {
		if local, err = cpuset.ParseMask(s); err != nil {
			return fmt.Errorf("read %s/local_cpus: %w", n.DevPath, err)
		}
		src = "local_cpus"
	} else if n.NUMANode >= 0 {
		f := fmt.Sprintf("/sys/devices/system/node/node%d/cpulist", n.NUMANode)
		if s, err := readString(r, f); err == nil {
			if local, err = cpuset.ParseList(s, 0); err != nil {
				return fmt.Errorf("read %s: %w", f, err)
			}
			src = f
		}
	}
	local = local.Intersect(n.OnlineCPUs)
	if local.IsEmpty() {
		if src != "" {
			n.warnf("none of the CPUs in %s/%s is online: using all online CPUs", n.devName(), src)
		}
		local, src = n.OnlineCPUs, ""
	}
	n.LocalCPUs = local
	if nodeNote != "" {
		if src != "" {
			n.warnf("%s: local CPUs %s taken from its %s", nodeNote, local, src)
		} else {
			n.warnf("%s: every online CPU (%s) counts as local", nodeNote, local)
		}
	}
	return nil
}

func (n *NIC) devName() string {
	if n.PCI != "" {
		return n.PCI
	}
	return n.DevPath
}

func (n *NIC) device() irqname.Device {
	return irqname.Device{Iface: n.Iface, Driver: n.Driver, BDF: n.PCI, VirtioDev: n.VirtioDev}
}

// irqNamer finds the action names of IRQs, preferring /sys/kernel/irq,
// then /proc/irq/N/<name>/, then the /proc/interrupts line.
type irqNamer struct {
	r     Root
	table *interrupts.Table
	err   error
}

func (in *irqNamer) interrupts() (*interrupts.Table, error) {
	if in.table == nil && in.err == nil {
		b, err := in.r.ReadFile("/proc/interrupts")
		if err != nil {
			in.err = fmt.Errorf("read /proc/interrupts: %w", err)
		} else if in.table, err = interrupts.Parse(bytes.NewReader(b)); err != nil {
			in.err = fmt.Errorf("read /proc/interrupts: %w", err)
		}
	}
	return in.table, in.err
}

func (in *irqNamer) names(irq int) ([]string, error) {
	if b, err := in.r.ReadFile(fmt.Sprintf("/sys/kernel/irq/%d/actions", irq)); err == nil {
		var out []string
		for _, s := range strings.Split(strings.TrimSpace(string(b)), ",") {
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
		return out, nil
	}
	if ents, err := in.r.ReadDir(fmt.Sprintf("/proc/irq/%d", irq)); err == nil {
		var out []string
		for _, e := range ents {
			if e.IsDir() {
				out = append(out, e.Name())
			}
		}
		if len(out) > 0 {
			return out, nil
		}
	}
	t, err := in.interrupts()
	if err != nil {
		return nil, err
	}
	if row, ok := t.ByNumber(irq); ok {
		return row.Actions, nil
	}
	return nil, nil
}

func (n *NIC) readIRQs(r Root) error {
	namer := &irqNamer{r: r}
	var vecs []irqname.Vector
	ents, err := r.ReadDir(n.DevPath + "/msi_irqs")
	if err != nil && !isNotExist(err) {
		return fmt.Errorf("list %s/msi_irqs: %w", n.DevPath, err)
	}
	for _, e := range ents {
		irq, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		names, err := namer.names(irq)
		if err != nil {
			return fmt.Errorf("name irq %d: %w", irq, err)
		}
		vecs = append(vecs, irqname.Vector{IRQ: irq, Names: names})
	}
	n.IRQSource = "msi_irqs"
	if len(vecs) == 0 {
		// Xen guests and some layouts have no msi_irqs: match names.
		n.IRQSource = "interrupts"
		t, err := namer.interrupts()
		if err != nil {
			return fmt.Errorf("%s has no msi_irqs, and name matching needs /proc/interrupts: %w", n.devName(), err)
		}
		dev := n.device()
		for _, row := range t.IRQs {
			for _, a := range row.Actions {
				if irqname.MatchName(dev, a).Kind != irqname.Unknown && n.attributable(a) {
					vecs = append(vecs, irqname.Vector{IRQ: row.Number, Names: row.Actions})
					break
				}
			}
		}
		n.warnf("%s has no msi_irqs: queue IRQs found by name in /proc/interrupts", n.devName())
	}
	sort.Slice(vecs, func(i, j int) bool { return vecs[i].IRQ < vecs[j].IRQ })
	named := 0
	for _, m := range irqname.Classify(n.device(), vecs) {
		if m.Name != "" {
			named++
		}
		if m.Kind != irqname.Queue {
			reason := m.Reason
			if reason == "" {
				reason = m.Kind.String()
			}
			n.Skipped = append(n.Skipped, Skipped{IRQ: m.IRQ, Name: m.Name, Reason: reason})
			continue
		}
		v := Vector{Queue: m.Queue, Dir: m.Dir, IRQ: m.IRQ, Name: m.Name}
		if err := v.readAffinity(r); err != nil {
			return err
		}
		n.Vectors = append(n.Vectors, v)
	}
	if len(vecs) > 0 && named == 0 {
		n.warnf("no IRQ of %s has a handler: is %s down? drivers request queue IRQs when the interface is opened", n.devName(), n.Iface)
	}
	if len(n.Vectors) == 0 {
		n.warnf("no per-queue IRQs found for %s: nothing can be pinned", n.Iface)
	}
	return nil
}

// attributable reports whether a name matched in /proc/interrupts can be
// this NIC's: without a PCI address only names carrying the interface or
// virtio device name are, since irqname accepts any PCI address then and
// "mlx5_comp0@pci:…" would claim another function's vectors (a netvsc
// interface would take its VF's, or every VF's, queue IRQs).
func (n *NIC) attributable(name string) bool {
	return n.PCI != "" || strings.Contains(name, n.Iface) ||
		n.VirtioDev != "" && strings.Contains(name, n.VirtioDev)
}

func (v *Vector) readAffinity(r Root) error {
	dir := fmt.Sprintf("/proc/irq/%d/", v.IRQ)
	f := dir + "smp_affinity_list"
	s, err := readString(r, f)
	if isNotExist(err) {
		f = dir + "smp_affinity"
		s, err = readString(r, f)
	}
	if err != nil {
		return fmt.Errorf("read affinity of irq %d (%s): %w", v.IRQ, v.Name, err)
	}
	v.Current = s
	if info, err := r.Stat(f); err == nil && info.Mode().Perm()&0o222 == 0 {
		v.Managed = true
	}
	if e, err := readString(r, dir+"effective_affinity_list"); err == nil {
		v.Effective = e
	}
	return nil
}
